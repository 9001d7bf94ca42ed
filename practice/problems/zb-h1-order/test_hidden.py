import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.schedules import build
from course.sim import simulate

from submission import zb_h1_order


def check_plan(p, m, costs, what):
    ranks = [zb_h1_order(p, m, r) for r in range(p)]
    if not all(isinstance(o, list) and all(isinstance(t, str) for t in o) for o in ranks):
        raise CheckFailed(tr(f"{what}: 每个 rank 应该返回一个字符串列表",
                             f"{what}: each rank must return a list of strings"))
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in ranks), m), costs)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}: 不是合法的 plan 或者会死锁 (deadlock)：{e}",
                             f"{what}: not a valid plan, or it deadlocks: {e}")) from None
    if not any(t.startswith("W") for o in ranks for t in o):
        raise CheckFailed(tr(f"{what}: 要把 backward 拆成 B 和 W", f"{what}: split the backward into B and W"))
    for r, peak in enumerate(tl.peak_activations):
        assert_true(peak <= p + 1e-9, tr(f"{what}: rank {r} 的峰值激活是 {peak:g}，超过了 p={p}",
                                               f"{what}: rank {r} peaks at {peak:g} activations, above p={p}"))
    f, b, w = costs.f, costs.b, costs.w
    if m >= p:
        target = m * (f + b + w) + (p - 1) * (f + b - w)
        assert_true(tl.makespan <= target + 1e-9 * target,
                    tr(f"{what}: makespan {tl.makespan:g}，目标 m(F+B+W)+(p-1)(F+B-W) = {target:g}",
                       f"{what}: makespan {tl.makespan:g}, the target m(F+B+W)+(p-1)(F+B-W) is {target:g}"))
    else:
        limit = simulate(build("1f1b", p, m), costs).makespan
        assert_true(tl.makespan <= limit + 1e-9 * limit,
                    tr(f"{what}: makespan {tl.makespan:g} 比 1F1B 的 {limit:g} 还长",
                       f"{what}: makespan {tl.makespan:g} is longer than 1F1B's {limit:g}"))


def test_edge_cases():
    for p, m in [(1, 3), (4, 1), (5, 3), (4, 4)]:
        check_plan(p, m, Costs(f=1, b=1, w=1), f"p={p}, m={m}")


def test_random_shapes_and_costs():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(30):
        p = rng.randint(1, 8)
        m = rng.randint(1, 3 * p)
        f, b = rng.uniform(0.5, 2), rng.uniform(0.5, 2)
        costs = Costs(f=f, b=b, w=rng.uniform(0.05, 1) * min(f, b))
        check_plan(p, m, costs, f"p={p}, m={m}, F={f:.3f}, B={b:.3f}, W={costs.w:.3f} (seed={seed})")
    assert_not_using(zb_h1_order, "course")


def test_bad_arguments():
    for args in [(0, 4, 0), (4, 0, 0), (4, 4, 4), (4, 4, -1), (False, 4, 0), (4, "4", 0)]:
        assert_raises(ValueError, zb_h1_order, *args, what=f"zb_h1_order{args}")
