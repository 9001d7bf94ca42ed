import random

from torch.distributed.pipelining.schedules import _Action, _ComputationType

from course.checks import CheckFailed, assert_equal, assert_not_using, assert_raises, fresh_seed
from course.plan import Plan, PlanError, ops_of
from course.schedules import REGISTRY, build
from course.torch_bridge import from_torch, torch_order

from submission import from_actions, to_actions


def check_with_torch(plan, what):
    """Parse every action with torch's own parser and compare it with the plan's step."""
    got = to_actions(plan)
    if type(got) is not list or len(got) != plan.p:
        raise CheckFailed(f"{what}: 要返回 {plan.p} 个 rank 的列表 (list)")
    position = plan.chunk_of_stage()
    kinds = {"F": _ComputationType.FORWARD, "W": _ComputationType.BACKWARD_WEIGHT,
             "B": _ComputationType.BACKWARD_INPUT if plan.split_backward else _ComputationType.FULL_BACKWARD}
    for r, steps in enumerate(plan.ranks):
        assert_equal(len(got[r]) if type(got[r]) is list else None, len(steps), f"{what}: rank {r} 的动作个数",
                     "一个 Overlap 步骤是一个 OVERLAP_F_B 动作")
        for k, (text, step) in enumerate(zip(got[r], steps)):
            if type(text) is not str:
                raise CheckFailed(f"{what}: rank {r} 第 {k} 个动作要是 str")
            try:
                action = _Action.from_str(text)
            except Exception as e:
                raise CheckFailed(f"{what}: torch 读不懂 rank {r} 的第 {k} 个动作 {text!r}: {e}") from None
            leaves = list(action.sub_actions) if action.computation_type == _ComputationType.OVERLAP_F_B else [action]
            ops = ops_of(step)
            want = [(kinds[op.kind], position[op.stage], op.mb) for op in ops]
            have = [(a.computation_type, a.stage_index, a.microbatch_index) for a in leaves]
            if have != want:
                raise CheckFailed(f"{what}: rank {r} 第 {k} 个动作 {text!r} 表示 {have}，而 plan 的 {step} 应该是 {want}")


def parsed(tokens, m, what):
    if type(tokens) is not list or not all(type(row) is list and all(type(t) is str for t in row) for row in tokens):
        raise CheckFailed(f"{what}: 要返回每个 rank 一个 token 字符串列表")
    try:
        return Plan.parse("\n".join(" ".join(row) for row in tokens), m)
    except PlanError as e:
        raise CheckFailed(f"{what}: Plan.parse 读不了你的 token：{e}") from None


def test_every_schedule_parses_in_torch():
    seed = fresh_seed()
    rng = random.Random(seed)
    for name, info in sorted(REGISTRY.items()):
        if name == "dualpipe":
            continue      # two opposite routes: no torch form
        for _ in range(3):
            p = rng.randint(1, 4) * (2 if name.startswith("dualpipe") else 1)
            m = p * rng.randint(1, 3) * 2
            params = {"v": rng.randint(1, 3)} if "v" in info.params else {}
            try:
                plan = build(name, p, m, **params)
            except ValueError:
                continue
            check_with_torch(plan, f"to_actions({name} p={p} m={m} {params}) (seed={seed})")
    assert_not_using(to_actions, "course.torch_bridge")


def test_torch_schedules_come_back():
    for cls, p, m, v in [("Schedule1F1B", 4, 8, 1), ("ScheduleInterleaved1F1B", 2, 4, 2),
                         ("ScheduleZBVZeroBubble", 2, 4, 2), ("ScheduleDualPipeV", 2, 6, 2),
                         ("ScheduleInterleavedZeroBubble", 2, 4, 2)]:
        order = torch_order(cls, p, m, v, comms=True)
        rows = [[str(a) if a is not None else None for a in order[r]] for r in sorted(order)]
        mine = parsed(from_actions(rows), m, f"from_actions({cls})")
        want = from_torch(order, m)
        for r in range(p):
            assert_equal(mine.rank_tokens(r), want.rank_tokens(r), f"from_actions({cls} p={p} m={m}) rank {r}",
                         "torch 的完整 backward B 在一个拆开了 I/W 的 schedule 里要怎么写？通信动作要丢掉")
    assert_not_using(from_actions, "course.torch_bridge")


def test_round_trip():
    for name, p, m, params in [("1f1b", 3, 6, {}), ("zb-h1", 3, 6, {}), ("interleaved", 2, 4, {"v": 2}),
                               ("zbv", 2, 4, {}), ("dualpipev", 2, 4, {})]:
        plan = build(name, p, m, **params)     # one route through stages 0..S-1: positions are stage numbers
        back = parsed(from_actions(to_actions(plan)), m, f"from_actions(to_actions({name}))")
        for r in range(p):
            assert_equal(back.rank_tokens(r), plan.rank_tokens(r), f"{name}: rank {r} 来回转一圈以后")


def test_bad_actions():
    assert_raises(ValueError, from_actions, [["0X0"]], what="from_actions([['0X0']])")
    assert_raises(ValueError, to_actions, Plan.parse("F0 B0 F0\nF0 B0"), what="to_actions(一个 op 出现两次的 plan)")
