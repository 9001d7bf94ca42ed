"""The schedules beyond 1F1B: interleaved, zb-h1, zb-h2, zbv, dualpipe, dualpipev.

Every (p, m, v) in a sweep either builds a plan that validates and simulates without deadlock, or is rejected with
one line that says what is allowed.  Structural facts (placement, routes, memory bounds, Megatron's order) are
checked directly; the timing facts live in test_formulas.py.
"""

from __future__ import annotations

import json

import pytest

from course.cli import main as cli
from course.costs import Costs
from course.formulas import parameters_per_rank
from course.plan import Op, Overlap, ops_of
from course.schedules import REGISTRY, build
from course.sim import simulate

NEW = ("interleaved", "zb-h1", "zb-h2", "zbv", "dualpipe", "dualpipev")


def sweep(name):
    vs = (2, 3, 4) if name == "interleaved" else (None,)
    for p in range(1, 7):
        for m in range(1, 3 * p + 3):
            for v in vs:
                yield p, m, v


@pytest.mark.parametrize("name", NEW)
def test_every_size_builds_a_valid_plan_or_is_rejected_in_one_line(name):
    built = rejected = 0
    for p, m, v in sweep(name):
        try:
            plan = build(name, p, m, v=v)
        except ValueError as e:
            msg = str(e)
            assert "\n" not in msg and name in msg and f"p={p}" in msg and f"m={m}" in msg, msg
            assert "needs" in msg, msg
            rejected += 1
            continue
        built += 1
        plan.validate()
        assert plan.p == p and plan.m == m and plan.name == name
        tl = simulate(plan, Costs(f=1, b=1, w=1))
        assert tl.makespan > 0
        # every op appears once; ranks run only the stages they hold
        ops = [op for steps in plan.ranks for st in steps for op in ops_of(st)]
        assert len(ops) == len(set(ops)) == len(plan.required_ops())
        assert sum(tl.busy) == pytest.approx(3 * p * m)   # every schedule does the same work: F + B + W per mb and rank
    assert built >= 10


def test_edge_cases_that_every_schedule_accepts():
    for name in ("zb-h1", "zb-h2", "zbv"):
        for p, m in ((1, 1), (1, 5), (5, 1), (6, 2)):
            simulate(build(name, p, m))
    simulate(build("interleaved", 1, 3, v=3))       # one rank: chunks run back to back
    simulate(build("dualpipev", 1, 2))
    simulate(build("dualpipe", 2, 4))


@pytest.mark.parametrize("name, p, m, v, text", [
    ("interleaved", 4, 6, 2, "interleaved needs m divisible by p (got p=4, m=6)"),
    ("interleaved", 4, 8, 1, "interleaved needs an integer v >= 2"),
    ("dualpipe", 3, 6, None, "dualpipe needs an even p and an even m >= 2p (got p=3, m=6)"),
    ("dualpipe", 4, 6, None, "dualpipe needs an even p and an even m >= 2p (got p=4, m=6)"),
    ("dualpipe", 4, 9, None, "dualpipe needs an even p and an even m >= 2p (got p=4, m=9)"),
    ("dualpipev", 4, 7, None, "dualpipev needs m >= 2p (got p=4, m=7)"),
])
def test_rejections_say_what_is_allowed(name, p, m, v, text):
    with pytest.raises(ValueError) as err:
        build(name, p, m, v=v)
    assert text in str(err.value)
    assert "\n" not in str(err.value)


def test_v_is_only_for_interleaved():
    with pytest.raises(ValueError, match="zb-h1 does not take v"):
        build("zb-h1", 4, 8, v=2)
    assert REGISTRY["interleaved"].params == ("v",)


def test_interleaved_follows_megatrons_order():
    plan = build("interleaved", 2, 4, v=2)
    assert plan.placement == ((0, 2), (1, 3))
    assert plan.format().splitlines()[0].split() == [
        "F0.s0", "F1.s0", "F0.s2", "F1.s2",                       # warm-up: 2(p-1) + (v-1)p forwards
        "F2.s0", "B0.s2", "F3.s0", "B1.s2", "F2.s2", "B0.s0", "F3.s2", "B1.s0",   # groups of p per chunk
        "B2.s2", "B3.s2", "B2.s0", "B3.s0"]


@pytest.mark.parametrize("p, m, v", [(2, 4, 2), (4, 8, 2), (4, 12, 3), (3, 3, 4)])
def test_interleaved_placement_and_chunk_cost(p, m, v):
    plan = build("interleaved", p, m, v=v)
    assert plan.placement == tuple(tuple(r + c * p for c in range(v)) for r in range(p))
    assert plan.chunks == v * p
    tl = simulate(plan, Costs(f=1, b=1, w=1))
    assert sum(tl.busy) == pytest.approx(p * m * 3)       # each chunk costs 1/v of a rank's share


def skeleton(plan, r):
    return [(op.kind, op.mb) for op in plan.ranks[r] if op.kind != "W"]


@pytest.mark.parametrize("p, m", [(1, 3), (2, 5), (4, 8), (4, 3), (6, 13)])
def test_zb_h1_is_1f1b_with_w_split_off_and_keeps_its_memory(p, m):
    h1, base = build("zb-h1", p, m), build("1f1b", p, m)
    for r in range(p):
        assert skeleton(h1, r) == skeleton(base, r)
    assert max(simulate(h1).peak_activations) <= p
    # rank r defers its first W by r steps: the first W comes after r + 1 backwards
    for r in range(min(p, m)):
        kinds = [op.kind for op in h1.ranks[r]]
        assert kinds[:kinds.index("W")].count("B") == min(r + 1, m)


@pytest.mark.parametrize("p, m", [(2, 3), (4, 8), (4, 20), (5, 9), (6, 4)])
def test_zb_h2_memory_bound_and_warm_up(p, m):
    plan = build("zb-h2", p, m)
    tl = simulate(plan)
    assert max(tl.peak_activations) <= 2 * p - 1
    for r in range(p):
        kinds = [op.kind for op in plan.ranks[r]]
        assert kinds.index("B") == min(2 * (p - r) - 1, m)    # 2(p-r)-1 warm-up forwards
        if m >= 2 * p - 1:                                     # ... and 2r+1 W's after the last B
            assert kinds[::-1].index("B") == 2 * r + 1


@pytest.mark.parametrize("p, m", [(1, 2), (2, 4), (4, 8), (4, 5), (5, 13)])
def test_zbv_v_placement_and_memory(p, m):
    plan = build("zbv", p, m)
    assert plan.placement == tuple((r, 2 * p - 1 - r) for r in range(p))
    assert plan.chunks == 2 * p and plan.split_backward
    assert max(simulate(plan).peak_activations) <= p
    # the last rank turns the micro-batch around locally: F on stage p-1 then p on the same rank
    last = plan.ranks[p - 1]
    assert last.index(Op("F", 0, p - 1)) < last.index(Op("F", 0, p))


@pytest.mark.parametrize("p, m", [(2, 4), (4, 8), (4, 14), (6, 12), (8, 16)])
def test_dualpipe_two_directions_two_copies(p, m):
    plan = build("dualpipe", p, m)
    assert plan.routes[0] == tuple(range(p)) and plan.routes[-1] == tuple(range(p, 2 * p))
    assert plan.routes.count(plan.routes[0]) == m // 2
    assert plan.placement == tuple((r, 2 * p - 1 - r) for r in range(p))
    assert plan.rank_of_stage()[p] == p - 1            # route B enters at the last rank
    assert parameters_per_rank(plan) == [2] * p        # twice 1F1B's parameters
    assert any(isinstance(st, Overlap) for st in plan.ranks[0])
    assert max(simulate(plan).peak_activations) <= p + 1
    # mirrored ranks run mirrored orders: rank p-1-r is rank r with the directions swapped
    for r in range(p):
        mirror = {s: (s + p) % (2 * p) for s in range(2 * p)}   # route A position k <-> route B position k
        flip = [(op.kind, (op.mb + m // 2) % m, mirror[op.stage]) for st in plan.ranks[r] for op in ops_of(st)]
        assert flip == [(op.kind, op.mb, op.stage) for st in plan.ranks[p - 1 - r] for op in ops_of(st)]


@pytest.mark.parametrize("p, m", [(1, 2), (2, 4), (4, 8), (4, 11), (8, 16)])
def test_dualpipev_is_one_copy_in_a_v(p, m):
    plan = build("dualpipev", p, m)
    assert plan.routes == (tuple(range(2 * p)),) * m
    assert plan.placement == tuple((r, 2 * p - 1 - r) for r in range(p))
    assert parameters_per_rank(plan) == [1] * p
    assert max(simulate(plan).peak_activations) <= p + 0.5


def test_overlap_shortens_dualpipe():
    plan = build("dualpipe", 4, 16)
    slow, fast = simulate(plan, Costs(overlap=1.0)), simulate(plan, Costs(overlap=0.6))
    pairs = sum(isinstance(st, Overlap) for st in plan.ranks[0])
    assert pairs > 0
    assert fast.busy[0] == pytest.approx(slow.busy[0] - pairs * 0.4 * 2)   # each F&B: 0.6 x (F + B) instead of F + B
    assert fast.makespan < slow.makespan


def run_cli(capsys, *args):
    code = cli(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name, extra", [("interleaved", ["-v", "2"]), ("zb-h1", []), ("zb-h2", []), ("zbv", []),
                                         ("dualpipe", []), ("dualpipev", [])])
def test_cli_simulates_every_schedule(capsys, name, extra):
    code, out, _ = run_cli(capsys, "sim", name, "-p", "4", "-m", "8", *extra, "--json")
    assert code == 0
    got = json.loads(out)
    assert got["schedule"] == name and got["p"] == 4 and got["m"] == 8
    assert got["makespan"] == pytest.approx(simulate(build(name, 4, 8, v=2 if extra else None)).makespan)
    assert got["iterations"] == 1 and got["period"] == pytest.approx(got["makespan"])


def test_cli_overlap_iterations_and_errors(capsys):
    code, out, _ = run_cli(capsys, "sim", "dualpipe", "-p", "4", "-m", "8", "--overlap", "0.5", "--json")
    assert code == 0
    assert json.loads(out)["makespan"] == pytest.approx(simulate(build("dualpipe", 4, 8), Costs(overlap=0.5)).makespan)
    code, out, _ = run_cli(capsys, "sim", "zb-h2", "-p", "4", "-m", "8", "--iterations", "3", "--no-sync", "--json")
    got = json.loads(out)
    assert code == 0 and got["iterations"] == 3 and got["period"] == pytest.approx(24)
    code, out, _ = run_cli(capsys, "sim", "zb-h2", "-p", "4", "-m", "8", "--iterations", "3")
    assert code == 0 and "steady-state period 27" in out
    code, _, err = run_cli(capsys, "sim", "interleaved", "-p", "4", "-m", "6", "-v", "2")
    assert code == 2 and "interleaved needs m divisible by p (got p=4, m=6)" in err
    code, _, err = run_cli(capsys, "sim", "zb-h1", "-p", "4", "-m", "8", "--iterations", "0")
    assert code == 2 and "--iterations" in err
    code, _, err = run_cli(capsys, "sim", "dualpipe", "-p", "4", "-m", "8", "--overlap", "0")
    assert code == 2 and "overlap must be a finite positive number" in err
