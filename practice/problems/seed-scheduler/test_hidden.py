import math
import random

from course.checks import CheckFailed, assert_equal, assert_not_using, assert_raises, assert_true, fresh_seed, show
from course.costs import Costs
from course.i18n import tr
from course.plan import Op, Plan, PlanError
from course.schedules import build
from course.seed_scheduler import seed_order, seed_schedule
from course.sim import DeadlockError, simulate

from submission import dropped_ops, failing_case, fixed_schedule


def blog_tokens(p, m, costs):
    return [f"{'F' if kind == 'forward' else 'B'}{mb}" for kind, mb in seed_schedule(m, p, costs)]


def random_costs(rng, m):
    if rng.random() < 0.5:
        return [float(rng.choice([1, 2, 3])) for _ in range(m)]     # ties: the stable order matters
    return [rng.uniform(0.2, 3.0) for _ in range(m)]


def to_plan(orders, p, m, what):
    """The learner's per-rank token lists as a Plan (rank r holds stage r)."""
    if type(orders) is not list or len(orders) != p or any(type(o) is not list for o in orders):
        raise CheckFailed(tr(f"{what}：应该是 {p} 个列表（每个 rank 一个），得到 {show(orders)}",
                             f"{what}: expected {p} lists (one per rank), got {show(orders)}"))
    ranks = []
    for r, order in enumerate(orders):
        ops = []
        for t in order:
            if type(t) is not str or len(t) < 2 or t[0] not in "FB" or not t[1:].isdigit():
                raise CheckFailed(tr(f"{what}：rank {r} 的 {show(t)} 不是 'F3'、'B3' 这样的操作",
                                     f"{what}: {show(t)} on rank {r} is not an operation such as 'F3' or 'B3'"))
            ops.append(Op(t[0], int(t[1:]), r))
        ranks.append(ops)
    plan = Plan(ranks, m)
    try:
        plan.validate()
    except PlanError as e:
        raise CheckFailed(tr(f"{what}：plan 不完整或不合法：{e}",
                             f"{what}: the plan is incomplete or invalid: {e}")) from None
    return plan


def in_same_order(p, m, costs):
    """The reference: course's 1F1B with the micro-batches renamed to enter in the blog's order."""
    order = seed_order(m, costs)
    return Plan([[Op(op.kind, order[op.mb], op.stage) for op in rank] for rank in build("1f1b", p, m).ranks], m)


def run(plan, costs, what):
    try:
        return simulate(plan, costs)
    except DeadlockError as e:
        raise CheckFailed(tr(f"{what}：死锁了：{e}", f"{what}: deadlock: {e}")) from None


def test_dropped_ops_against_the_blog():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(60):
        p, m = rng.randint(1, 8), rng.randint(1, 16)
        costs = random_costs(rng, m)
        present = set(blog_tokens(p, m, costs))
        want = [f"{kind}{mb}" for mb in range(m) for kind in "FB" if f"{kind}{mb}" not in present]
        assert_equal(dropped_ops(p, m, costs), want, f"dropped_ops({p}, {m}, {show(costs)}) (seed={seed})",
                     tr("循环一共走几步？每一步走的是哪个分支？", "how many times does the loop run, and which branch "
                        "does each run take?"))
    assert_not_using(dropped_ops, "course")


def test_failing_case_is_the_blog_completed_and_slower():
    case = failing_case()
    if type(case) is not dict or not {"p", "m", "mb_costs", "plan"} <= set(case):
        raise CheckFailed(tr(f"failing_case() 应该返回有 p、m、mb_costs、plan 四项的 dict，得到 {show(case)}",
                             f"failing_case() should return a dict with p, m, mb_costs and plan, got {show(case)}"))
    p, m, costs = case["p"], case["m"], case["mb_costs"]
    assert_true(type(p) is int and type(m) is int and 2 <= p <= 8 and 1 <= m <= 16,
                tr(f"failing_case(): 要求 2 <= p <= 8、1 <= m <= 16，得到 p={show(p)}、m={show(m)}",
                   f"failing_case(): needs 2 <= p <= 8 and 1 <= m <= 16, got p={show(p)}, m={show(m)}"))
    assert_true(type(costs) is list and len(costs) == m
                and all(type(x) in (int, float) and math.isfinite(x) and x >= 0 for x in costs),
                tr(f"failing_case(): mb_costs 要是 {m} 个有限的非负数，得到 {show(costs)}",
                   f"failing_case(): mb_costs must be {m} finite non-negative numbers, got {show(costs)}"))
    plan = to_plan(case["plan"], p, m, "failing_case()")
    blog = blog_tokens(p, m, costs)
    for r, order in enumerate(case["plan"]):
        kept = [t for t in order if t in blog]
        assert_true(kept == blog, tr(
            f"failing_case(): rank {r} 去掉补进来的操作后应该正好是博客的列表 {show(blog)}，得到 {show(kept)}",
            f"failing_case(): rank {r} without the operations you put back should be the blog's list {show(blog)}, "
            f"got {show(kept)}"))
    unit = Costs(f=1.0, b=2.0, w=0.0, mb_scale=[float(x) for x in costs])
    ours = run(plan, unit, "failing_case()").makespan
    ref = simulate(in_same_order(p, m, costs), unit).makespan
    assert_true(ours > ref * (1 + 1e-9), tr(
        f"failing_case(): 补全后的博客调度 makespan {ours:g}，同样顺序的 1F1B 是 {ref:g}：这个例子没有让它变慢",
        f"failing_case(): the completed blog schedule takes {ours:g} and 1F1B in the same order {ref:g}: this case "
        "does not make it slower"))


def test_fixed_schedule_keeps_the_order_and_is_no_slower_than_1f1b():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(30):
        p, m = rng.randint(1, 8), rng.randint(1, 16)
        mb_costs = random_costs(rng, m)
        what = f"fixed_schedule({p}, {m}, {show(mb_costs)}) (seed={seed})"
        orders = fixed_schedule(p, m, mb_costs)
        plan = to_plan(orders, p, m, what)
        order = [f"F{mb}" for mb in seed_order(m, mb_costs)]
        for s in range(p):
            assert_true([t for t in orders[s] if t[0] == "F"] == order, tr(
                f"{what}：stage {s} 的 forward 应该按博客的顺序 {show(order)}",
                f"{what}: stage {s} should run its forwards in the blog's order {show(order)}"))
        costs = Costs(f=[rng.uniform(0.5, 2.0) for _ in range(p)], b=[rng.uniform(0.5, 4.0) for _ in range(p)],
                      w=0.0, mb_scale=mb_costs)
        tl = run(plan, costs, what)
        for s, peak in enumerate(tl.peak_activations):
            assert_true(peak <= min(m, p - s), tr(
                f"{what}：stage {s} 同时保存了 {peak:g} 份激活，1F1B 只存 {min(m, p - s)} 份",
                f"{what}: stage {s} holds {peak:g} micro-batches at once, 1F1B only {min(m, p - s)}"))
        ref = simulate(in_same_order(p, m, mb_costs), costs).makespan
        assert_true(tl.makespan <= ref * (1 + 1e-9), tr(
            f"{what}：makespan {tl.makespan:g}，同样顺序的 1F1B 是 {ref:g}",
            f"{what}: makespan {tl.makespan:g}, 1F1B in the same order takes {ref:g}"))
    assert_not_using(fixed_schedule, "course.schedules")


def test_bad_arguments():
    for fn in (dropped_ops, fixed_schedule):
        for args in [(0, 4, [1.0] * 4), (4, 0, []), (True, 2, [1.0, 1.0]), (4, 2.0, [1.0, 1.0]), (4, 2, [1.0]),
                     (4, 2, [1.0, -1.0]), (4, 2, [1.0, float("nan")]), (4, 2, [1.0, "2"]), (4, 2, None)]:
            assert_raises(ValueError, fn, *args, what=f"{fn.__name__}{show(args)}")
