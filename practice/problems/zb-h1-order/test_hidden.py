import random

from course.checks import CheckFailed, assert_close, assert_equal, assert_not_using, assert_raises, fresh_seed
from course.plan import Plan, PlanError
from course.sim import simulate
from course.schedules import build

from submission import zb_h1_order


def check_plan(p, m, what):
    ranks = [zb_h1_order(p, m, r) for r in range(p)]
    try:
        timeline = simulate(Plan.parse("\n".join(" ".join(o) for o in ranks), m))
    except PlanError as e:
        raise CheckFailed(f"{what}: 不是合法的 plan 或者会死锁 (deadlock)：{e}") from None
    for r, peak in enumerate(timeline.peak_activations):
        if peak > p:
            raise CheckFailed(f"{what}: rank {r} 的峰值激活 (peak activations) 是 {peak:g}，超过了 p={p}")
    if m >= p:
        assert_close(timeline.makespan, 3 * m + p - 1, f"{what}: makespan (F=B=W=1)", "bubble 应该是 (p-1)(F+B-W)")
    else:
        limit = simulate(build("1f1b", p, m)).makespan
        if timeline.makespan > limit + 1e-9:
            raise CheckFailed(f"{what}: makespan {timeline.makespan:g} 比 1F1B 的 {limit:g} 还长")


def test_edge_cases():
    assert_equal(zb_h1_order(1, 3, 0), "F0 B0 W0 F1 B1 W1 F2 B2 W2".split(), "zb_h1_order(1, 3, 0)")
    assert_equal(zb_h1_order(4, 1, 3), ["F0", "B0", "W0"], "zb_h1_order(4, 1, 3)")
    check_plan(4, 1, "p=4, m=1")
    check_plan(5, 3, "p=5, m=3 (m < p)")
    check_plan(4, 4, "p=m=4")


def test_bad_arguments():
    for args in [(0, 4, 0), (4, 0, 0), (4, 4, 4), (4, 4, -1), (False, 4, 0), (4, "4", 0)]:
        assert_raises(ValueError, zb_h1_order, *args, what=f"zb_h1_order{args}")


def test_random_shapes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(30):
        p = rng.randint(1, 8)
        m = rng.randint(1, 3 * p)
        check_plan(p, m, f"p={p}, m={m} (seed={seed})")
    assert_not_using(zb_h1_order, "course")
