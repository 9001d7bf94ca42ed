import random

from course.checks import assert_equal, assert_not_using, assert_raises, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.schedules import build
from course.sim import simulate

from submission import choose_m


def reference(p, batch, t0, c, act, cap):
    best = None
    for m in range(1, batch + 1):
        if batch % m:
            continue
        b = batch / m
        tl = simulate(build("1f1b", p, m), Costs(f=t0 + c * b, b=t0 + c * b, w=t0 + c * b, act=act * b))
        if cap is not None and max(tl.peak_activations) > cap * (1 + 1e-12):
            continue
        if best is None or tl.makespan < best[0] * (1 - 1e-12):
            best = (tl.makespan, m)
    return None if best is None else best[1]


def test_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(40):
        p = rng.randint(1, 8)
        batch = rng.choice([12, 16, 24, 32, 36, 48, 60, 64])
        t0, c = rng.choice([0.0, rng.uniform(0, 2)]), rng.uniform(0.01, 1)
        act = rng.choice([0.0, 1.0])
        cap = rng.choice([None, rng.uniform(1, batch)]) if act else None
        want = reference(p, batch, t0, c, act, cap)
        what = f"choose_m({p}, {batch}, {t0:.3f}, {c:.3f}, {act}, {cap}) (seed={seed})"
        if want is None:
            assert_raises(ValueError, choose_m, p, batch, t0, c, act, cap, what=what,
                          hint=tr("没有一个 m 放得下", "no m fits"))
        else:
            assert_equal(choose_m(p, batch, t0, c, act, cap), want, what,
                         tr("makespan 是多少个 (F+B) 的时间？固定开销 t0 每个操作都要付一次；rank 0 最多同时存几个 "
                            "micro-batch？", "how many times (F+B) is the makespan? Every operation pays the fixed "
                            "cost t0 once; how many micro-batches does rank 0 hold at most?"))
    assert_not_using(choose_m, "course")


def test_bad_arguments():
    for args in [(0, 8, 1.0, 1.0), (4, 0, 1.0, 1.0), (True, 8, 1.0, 1.0), (4, 8.0, 1.0, 1.0), (4, 8, -1.0, 1.0),
                 (4, 8, float("nan"), 1.0), (4, 8, 1.0, float("inf")), (4, 8, 1.0, 1.0, -1.0),
                 (4, 8, 1.0, 1.0, 1.0, float("nan")), (4, 8, "1", 1.0)]:
        assert_raises(ValueError, choose_m, *args, what=f"choose_m{args}")
