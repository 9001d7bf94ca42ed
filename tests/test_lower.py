"""course.lower: a plan lowered to compute, send and receive actions; the per-pair order NCCL needs; the deadlock
blocking sends cause, predicted without a process (the live runs that agree are in test_live.py and
test_minipipe.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from course.lower import (
    COMPUTE,
    RECV,
    SEND,
    Action,
    Message,
    blocking_deadlock,
    exchanges,
    format_actions,
    lower,
    messages,
    pair_order_mismatches,
)
from course.plan import Plan, ops_of
from course.schedules import REGISTRY, build

SIZES = [(2, 4), (3, 6), (4, 8), (4, 16)]


def registered_plans():
    """Every registered schedule at every size it takes."""
    for name, info in REGISTRY.items():
        for p, m in SIZES:
            try:
                yield build(name, p, m, **({"v": 2} if "v" in info.params else {}))
            except ValueError:      # e.g. dualpipe needs even p, interleaved m % p == 0
                continue


PLANS = list(registered_plans())


def test_every_registered_schedule_is_lowered():
    assert {plan.name for plan in PLANS} == set(REGISTRY)


def test_the_docstring_example():
    assert format_actions(lower(build("1f1b", 2, 2))) == (
        "rank 0: F0 send(F0->r1) F1 send(F1->r1) recv(B0<-r1) B0 recv(B1<-r1) B1\n"
        "rank 1: recv(F0<-r0) F0 B0 send(B0->r0) recv(F1<-r0) F1 B1 send(B1->r0)")


@pytest.mark.parametrize("plan", PLANS, ids=lambda plan: f"{plan.name}-p{plan.p}-m{plan.m}")
def test_lowering_keeps_the_plan_and_moves_every_message_once(plan):
    lowered = lower(plan)
    rank_of = plan.rank_of_stage()
    for r, actions in enumerate(lowered):    # the compute steps are the plan's, in its order
        assert [a.step for a in actions if a.kind == COMPUTE] == list(plan.ranks[r])
    remote = [msg for msg in messages(plan) if rank_of[msg.producer.stage] != rank_of[msg.consumer.stage]]
    sends = Counter((r, a.message) for r, actions in enumerate(lowered) for a in actions if a.kind == SEND)
    recvs = Counter((r, a.message) for r, actions in enumerate(lowered) for a in actions if a.kind == RECV)
    assert sends == Counter((rank_of[msg.producer.stage], msg) for msg in remote)
    assert recvs == Counter((rank_of[msg.consumer.stage], msg) for msg in remote)
    for actions in lowered:
        done = set()
        for a in actions:
            if a.kind == COMPUTE:
                done.update(ops_of(a.step))
            elif a.kind == SEND:          # right after the step that produced it
                assert a.message.producer in done and a.peer == rank_of[a.message.consumer.stage]
            else:                         # before the step that consumes it
                assert a.message.consumer not in done and a.peer == rank_of[a.message.producer.stage]
    tags = [a.tag for actions in lowered for a in actions if a.kind == SEND]
    assert len(set(tags)) == len(tags)    # a tag names one message


@pytest.mark.parametrize("plan", PLANS, ids=lambda plan: f"{plan.name}-p{plan.p}-m{plan.m}")
def test_per_pair_send_order_equals_receive_order(plan):
    """NCCL's precondition: for each pair of ranks, the order of one side's sends is the other side's receives."""
    assert pair_order_mismatches(lower(plan)) == []


def test_the_pair_order_check_can_fail():
    # rank 1 of zbv p=2 receives B0's gradient for stage 2 before the activation for F1.s1 if receives sit at
    # their consumers, while rank 0 sends F1's activation first: lower() moves that receive earlier
    plan = build("zbv", 2, 4)
    at_consumer = []
    for actions in lower(plan):
        recvs = [a for a in actions if a.kind == RECV]
        row = [a for a in actions if a.kind != RECV]
        for a in recvs:                   # each receive right before its consumer
            i = next(k for k, b in enumerate(row) if b.kind == COMPUTE and a.message.consumer in ops_of(b.step))
            row.insert(i, a)
        at_consumer.append(row)
    problems = pair_order_mismatches(at_consumer)
    assert problems and problems[0].startswith("rank 0 -> rank 1: message 2 sent is the activation for F2.s1, "
                                               "message 2 received is the gradient for B0.s2"), problems


def test_messages_are_the_plans_dependencies_across_stages():
    plan = build("interleaved", 2, 4, v=2)      # rank 0 holds stages 0 and 2: some messages stay on the rank
    got = set(messages(plan))
    want = {Message(d, op) for steps in plan.ranks for st in steps for op in ops_of(st)
            for d in plan.dependencies(op) if d.stage != op.stage}
    assert got == want and len(got) == 2 * plan.m * (plan.num_stages - 1)
    stay = {msg for msg in got if plan.rank_of_stage()[msg.producer.stage] == plan.rank_of_stage()[msg.consumer.stage]}
    assert not stay   # interleaved: neighbouring stages on different ranks
    v = build("zbv", 2, 2)                      # V: stages 1 and 2 share rank 1, so their hand-off gets no action
    lowered = format_actions(lower(v), v)
    assert "F0.s1 F0.s2 send(F0.s2->r0)" in lowered and "send(F0.s1" not in lowered


def test_actions_read_as_the_runtime_reports_them():
    send = next(a for a in lower(build("1f1b", 4, 8))[3] if a.kind == SEND)
    assert send.describe() == "B0.s3: blocked in send of the gradient for B0.s2 to rank 2 (tag 5)"
    recv = next(a for a in lower(build("1f1b", 4, 8))[1] if a.kind == RECV)
    assert recv.describe() == "F0.s1: blocked in recv of the activation for F0.s1 from rank 0 (tag 2)"
    assert Action(COMPUTE, build("1f1b", 2, 2).ranks[0][0]).describe() == "running F0.s0"
    assert send.to_json() == {"kind": "SEND", "op": "B0.s3", "producer": "B0.s3", "consumer": "B0.s2", "peer": 2,
                              "tag": 5}


# ---- blocking sends, predicted ---------------------------------------------------------------------------------
@pytest.mark.parametrize("p, m", [(2, 4), (3, 6), (4, 8), (8, 16)])
def test_1f1b_deadlocks_with_blocking_sends_and_chapter_3s_reorderings_do_not(p, m):
    lowered = lower(build("1f1b", p, m))
    stuck = blocking_deadlock(lowered)
    assert stuck is not None and set(stuck) == set(range(p))
    assert all(a.kind == SEND for a in stuck.values())        # every rank waits in a send
    # the last two ranks send to each other: the activation of F1 forward, the gradient of B0 back
    assert stuck[p - 1].describe().startswith(f"B0.s{p - 1}: blocked in send of the gradient for B0.s{p - 2}")
    assert stuck[p - 2].describe().startswith(f"F1.s{p - 2}: blocked in send of the activation for F1.s{p - 1}")
    assert blocking_deadlock(exchanges(lowered, "naive")) == stuck
    assert blocking_deadlock(exchanges(lowered, "parity")) is None
    assert blocking_deadlock(exchanges(lowered, "batched")) is None


def test_gpipe_runs_with_blocking_sends():
    for p, m in SIZES:
        assert blocking_deadlock(lower(build("gpipe", p, m))) is None


def test_exchanges_group_the_calls_chapter_3s_worker_makes():
    lowered = lower(build("1f1b", 3, 4))
    rank1 = exchanges(lowered, "batched")[1]
    tokens = [" ".join(a.token() for a in group) for group in rank1]
    # steady state on the middle rank: send the activation and receive a gradient in one exchange
    assert "send(F1->r2) recv(B0<-r2)" in tokens and "send(B0->r0) recv(F2<-r0)" in tokens
    parity = [a.token() for (a,) in exchanges(lowered, "parity")[1]]
    assert parity[parity.index("F1") + 1:][:2] == ["recv(B0<-r2)", "send(F1->r2)"]   # odd ranks receive first
    even = [a.token() for (a,) in exchanges(lowered, "parity")[0]]
    assert [a.token() for a in lowered[0]] == even
    with pytest.raises(ValueError, match="order must be one of naive, parity, batched"):
        exchanges(lowered, "async")


def test_a_cycle_is_a_deadlock_even_without_blocking_sends():
    plan = Plan.parse("F0 B0 F1 B1\nF1 F0 B0 B1")     # rank 1 needs F1 first, rank 0 sends it after B0
    stuck = blocking_deadlock(lower(plan))
    assert stuck and stuck[1].kind == RECV and stuck[1].message.consumer.mb == 1


# ---- the CLI and the floor it sits on -------------------------------------------------------------------------
def test_cli_plan_comms(capsys):
    from course.cli import main

    assert main(["plan", "1f1b", "-p", "2", "-m", "2", "--comms"]) == 0
    assert capsys.readouterr().out.strip() == format_actions(lower(build("1f1b", 2, 2)))
    assert main(["plan", "zbv", "-p", "2", "-m", "2", "--comms", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == "zbv" and out["actions"][1][0] == {"kind": "RECV", "op": "F0.s1", "producer": "F0.s0",
                                                             "consumer": "F0.s1", "peer": 0, "tag": 2}
    assert main(["plan", "1f1b", "-p", "2", "-m", "1", "--comms", "--torch"]) == 0
    assert capsys.readouterr().out.split() == ["0F0,0SEND_F0,0RECV_B0,0B0", "1RECV_F0,1F0,1B0,1SEND_B0"]


def test_lowering_runs_on_the_standard_library_alone():
    code = ("import sys; from course.schedules import build; from course.lower import lower, blocking_deadlock; "
            "blocking_deadlock(lower(build('dualpipe', 4, 8))); "
            "sys.exit(any(m in sys.modules for m in ('numpy', 'torch', 'matplotlib')))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
