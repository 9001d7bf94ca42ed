import random

from torch.distributed.pipelining.schedules import _Action, _ComputationType

from course.checks import CheckFailed, assert_equal, assert_raises, fresh_seed
from course.plan import Plan, ops_of
from course.schedules import REGISTRY, build

from submission import to_actions


def check_with_torch(plan, what):
    """Parse every action with torch's own parser and compare it with the plan's op."""
    got = to_actions(plan)
    if type(got) is not list or len(got) != plan.p:
        raise CheckFailed(f"{what}: 要返回 {plan.p} 个 rank 的列表 (list)")
    kinds = {"F": _ComputationType.FORWARD, "W": _ComputationType.BACKWARD_WEIGHT,
             "B": _ComputationType.BACKWARD_INPUT if plan.split_backward else _ComputationType.FULL_BACKWARD}
    for r, steps in enumerate(plan.ranks):
        ops = [op for step in steps for op in ops_of(step)]
        assert_equal(len(got[r]) if type(got[r]) is list else None, len(ops), f"{what}: rank {r} 的动作个数")
        for k, (text, op) in enumerate(zip(got[r], ops)):
            if type(text) is not str:
                raise CheckFailed(f"{what}: rank {r} 第 {k} 个动作要是 str")
            try:
                action = _Action.from_str(text)
            except Exception as e:
                raise CheckFailed(f"{what}: torch 读不懂 rank {r} 的第 {k} 个动作 {text!r}: {e}") from None
            want = (kinds[op.kind], op.stage, op.mb)
            have = (action.computation_type, action.stage_index, action.microbatch_index)
            if have != want:
                raise CheckFailed(f"{what}: rank {r} 第 {k} 个动作 {text!r} 表示 {have}，而 plan 的 {op} 应该是 {want}")


def test_interleaved_stage_numbers():
    assert_equal(to_actions(build("interleaved", 2, 2, v=2)),
                 [["0F0", "0F1", "2F0", "2F1", "2B0", "2B1", "0B0", "0B1"],
                  ["1F0", "1F1", "3F0", "3F1", "3B0", "3B1", "1B0", "1B1"]], "to_actions(interleaved p=2 m=2 v=2)",
                 "stage 编号用 op.stage（全局 stage），不是 chunk 的序号")


def test_overlapped_steps_are_expanded():
    check_with_torch(build("dualpipev", 2, 4), "to_actions(DualPipeV p=2 m=4)")


def test_every_schedule_parses_in_torch():
    seed = fresh_seed()
    rng = random.Random(seed)
    for name, info in sorted(REGISTRY.items()):
        for _ in range(3):
            p = rng.randint(1, 4) * (2 if name.startswith("dualpipe") else 1)
            m = p * rng.randint(1, 3) * 2
            params = {"v": rng.randint(1, 3)} if "v" in info.params else {}
            try:
                plan = build(name, p, m, **params)
            except ValueError:
                continue   # this schedule does not take these sizes
            check_with_torch(plan, f"to_actions({name} p={p} m={m} {params}) (seed={seed})")


def test_invalid_plan_is_rejected():
    bad = Plan.parse("F0 B0 F0\nF0 B0")   # F0 twice on rank 0
    assert_raises(ValueError, to_actions, bad, what="to_actions(一个 op 出现两次的 plan)", hint="先调用 plan.validate()")
