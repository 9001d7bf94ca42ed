import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.schedules import build
from course.sim import simulate

from submission import zb_h2_order


def check_plan(p, m, unit, what):
    ranks = [zb_h2_order(p, m, r) for r in range(p)]
    if not all(isinstance(o, list) and all(isinstance(t, str) for t in o) for o in ranks):
        raise CheckFailed(tr(f"{what}: 每个 rank 应该返回一个字符串列表",
                             f"{what}: each rank must return a list of strings"))
    costs = Costs(f=unit, b=unit, w=unit)
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in ranks), m), costs)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}: 不是合法的 plan 或者会死锁 (deadlock)：{e}",
                             f"{what}: not a valid plan, or it deadlocks: {e}")) from None
    if not any(t.startswith("W") for o in ranks for t in o):
        raise CheckFailed(tr(f"{what}: 要把 backward 拆成 B 和 W", f"{what}: split the backward into B and W"))
    for r, peak in enumerate(tl.peak_activations):
        assert_true(peak <= 2 * p - 1 + 1e-9,
                    tr(f"{what}: rank {r} 的峰值激活是 {peak:g}，超过了 2p-1={2 * p - 1}",
                       f"{what}: rank {r} peaks at {peak:g} activations, above 2p-1={2 * p - 1}"))
    if m >= 2 * p - 1:
        for r, idle in enumerate(tl.idle):
            assert_true(abs(idle) <= 1e-9 * tl.makespan, tr(f"{what}: rank {r} 在自己的窗口里空闲了 {idle:g}",
                                                                      f"{what}: rank {r} is idle for {idle:g} inside "
                                                                      "its own window"))
    else:
        limit = simulate(build("zb-h1", p, m), costs).makespan
        assert_true(tl.makespan <= limit * (1 + 1e-9),
                    tr(f"{what}: makespan {tl.makespan:g} 比 ZB-H1 的 {limit:g} 还长",
                       f"{what}: makespan {tl.makespan:g} is longer than ZB-H1's {limit:g}"))


def test_edge_cases():
    for p, m in [(1, 1), (1, 4), (4, 1), (4, 3), (4, 7), (3, 5)]:
        check_plan(p, m, 1.0, f"p={p}, m={m}")


def test_random_shapes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(25):
        p = rng.randint(1, 8)
        m = rng.randint(1, 4 * p)
        unit = rng.uniform(0.5, 2)
        check_plan(p, m, unit, f"p={p}, m={m}, F=B=W={unit:.3f} (seed={seed})")
    assert_not_using(zb_h2_order, "course")


def test_bad_arguments():
    for args in [(0, 4, 0), (4, 0, 0), (4, 4, 4), (4, 4, -1), (True, 4, 0), (4, 4.5, 0)]:
        assert_raises(ValueError, zb_h2_order, *args, what=f"zb_h2_order{args}")
