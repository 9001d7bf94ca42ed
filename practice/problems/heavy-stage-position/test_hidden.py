import random

from course.checks import assert_close, assert_equal, assert_not_using, assert_raises, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.schedules import build
from course.sim import simulate

from submission import best_positions, makespan_heavy_first


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
                     tr("每个位置都模拟一次：course.costs.Costs 的 f、b、w 可以是每个 stage 一个值的列表",
                        "simulate every position: course.costs.Costs takes a list of f, b, w values, one per stage"))


def test_heavy_first_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    cases = [(4, 8, h) for h in (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 5.0)]
    for _ in range(40):
        p = rng.randint(1, 12)
        cases.append((p, rng.randint(p, 32), rng.uniform(1, 5)))
    for p, m, h in cases:
        assert_close(makespan_heavy_first(p, m, h), spans(p, m, h)[0],
                     f"makespan_heavy_first({p}, {m}, {h:.4g}) (seed={seed})",
                     tr("慢的 stage 自己忙 3hm；它在哪两个地方可能要等？各等多久，和 h 有什么关系？",
                        "the slow stage is busy for 3hm; where can it have to wait, for how long, and how does "
                        "that depend on h?"), rel=1e-9, abs_tol=1e-9)
    assert_not_using(makespan_heavy_first, "course")


def test_bad_arguments():
    for fn in (best_positions, makespan_heavy_first):
        for args in [(0, 4, 2.0), (4, 0, 2.0), (True, 4, 2.0), (4, 4.0, 2.0), (4, 4, 0.9), (4, 4, float("nan")),
                     (4, 4, float("inf")), (4, 4, "2")]:
            assert_raises(ValueError, fn, *args, what=f"{fn.__name__}{args}")
    assert_raises(ValueError, makespan_heavy_first, 4, 3, 2.0, what="makespan_heavy_first(4, 3, 2.0)",
                  hint=tr("闭式解只对 m >= p 要求", "the closed form is asked for m >= p only"))
