import random

from course.checks import assert_close, assert_equal, assert_not_using, assert_raises, fresh_seed
from course.costs import Costs
from course.schedules import build
from course.sim import simulate

from submission import best_positions, makespan_heavy_last


def spans(p, m, h):
    out = []
    for k in range(p):
        f = [1.0] * p
        f[k] = float(h)
        out.append(simulate(build("1f1b", p, m), Costs(f=f, b=f, w=f)).makespan)
    return out


def test_best_positions_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(20):
        p, m, h = rng.randint(2, 7), rng.randint(1, 16), rng.choice([1.25, 1.5, 2.0, 3.0, rng.uniform(1, 4)])
        t = spans(p, m, h)
        want = [k for k, x in enumerate(t) if x <= min(t) * (1 + 1e-12)]
        assert_equal(best_positions(p, m, h), want, f"best_positions({p}, {m}, {h:.4g}) (seed={seed})",
                     "每个位置都模拟一次：course.costs.Costs 的 f、b、w 可以是每个 stage 一个值的列表")


def test_heavy_last_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(40):
        p, m, h = rng.randint(1, 12), rng.randint(1, 32), rng.uniform(1, 5)
        assert_close(makespan_heavy_last(p, m, h), spans(p, m, h)[-1], f"makespan_heavy_last({p}, {m}, {h:.4g}) "
                     f"(seed={seed})", "micro-batch 0 走完全程要多久？之后谁是瓶颈，它还要做几对 F+B？",
                     rel=1e-9, abs_tol=1e-9)
    assert_not_using(makespan_heavy_last, "course")


def test_bad_arguments():
    for fn in (best_positions, makespan_heavy_last):
        for args in [(0, 4, 2.0), (4, 0, 2.0), (True, 4, 2.0), (4, 4.0, 2.0), (4, 4, 0.9), (4, 4, float("nan")),
                     (4, 4, float("inf")), (4, 4, "2")]:
            assert_raises(ValueError, fn, *args, what=f"{fn.__name__}{args}")
