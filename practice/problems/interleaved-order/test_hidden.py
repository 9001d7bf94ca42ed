import random

from course.checks import assert_close, assert_equal, assert_not_using, assert_raises, fresh_seed, CheckFailed
from course.plan import Plan, PlanError
from course.sim import simulate

from submission import interleaved_order


def check_plan(p, m, v, what):
    ranks = [interleaved_order(p, m, v, r) for r in range(p)]
    for r, order in enumerate(ranks):
        warm = min(2 * (p - r - 1) + (v - 1) * p, m * v)
        head = [t[0] for t in order[:warm + 1]]
        if head[:warm] != ["F"] * warm:
            raise CheckFailed(f"{what}: rank {r} 的 warm-up 应该先做 {warm} 个 forward，得到 {order[:warm + 1]}")
    placement = [[c * p + r for c in range(v)] for r in range(p)]
    try:
        plan = Plan.parse("\n".join(" ".join(o) for o in ranks), m, placement=placement)
        timeline = simulate(plan)
    except PlanError as e:
        raise CheckFailed(f"{what}: 这个顺序不是合法的 plan 或者会死锁 (deadlock)：{e}") from None
    assert_close(timeline.makespan, 3 * m + 3 * (p - 1) / v, f"{what} 模拟的 makespan", rel=1e-6)


def test_edge_cases():
    check_plan(1, 3, 2, "p=1, m=3, v=2")
    check_plan(4, 4, 3, "m=p=4, v=3")
    check_plan(3, 6, 1, "v=1")
    assert_equal(interleaved_order(1, 1, 1, 0), ["F0.s0", "B0.s0"], "interleaved_order(1, 1, 1, 0)")


def test_bad_arguments():
    for args in [(0, 4, 2, 0), (2, 4, 0, 0), (2, 4, 2, 2), (2, 4, 2, -1), (2, 3, 2, 0), (True, 4, 2, 0),
                 (2, 4.0, 2, 0)]:
        assert_raises(ValueError, interleaved_order, *args, what=f"interleaved_order{args}")


def test_random_shapes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(25):
        p, v = rng.randint(1, 6), rng.randint(1, 4)
        m = p * rng.randint(1, 4)
        check_plan(p, m, v, f"p={p}, m={m}, v={v} (seed={seed})")
    assert_not_using(interleaved_order, "course")
