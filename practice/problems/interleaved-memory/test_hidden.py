import random

from course.checks import assert_close, assert_not_using, assert_raises, fresh_seed
from course.schedules import build
from course.sim import simulate

from submission import interleaved_peak


def test_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(25):
        p, v = rng.randint(1, 8), rng.randint(2, 4)
        m = p * rng.randint(2, 4)
        peaks = simulate(build("interleaved", p, m, v=v)).peak_activations
        r = rng.randrange(p)
        assert_close(interleaved_peak(p, m, v, r), peaks[r], f"interleaved_peak({p}, {m}, {v}, {r}) (seed={seed})",
                     "第一个 backward 结束时，这个 rank 已经开始了几个 forward？每个是多大？", rel=1e-9, abs_tol=1e-9)
    assert_not_using(interleaved_peak, "course")


def test_rank_zero_pays_more_than_1f1b():
    for p, v in [(4, 2), (8, 4), (2, 3)]:
        assert_close(interleaved_peak(p, 2 * p, v, 0), p + (p - 1) / v, f"interleaved_peak({p}, {2 * p}, {v}, 0)")


def test_bad_arguments():
    for args in [(0, 4, 2, 0), (2, 4, 0, 0), (2, 4, 1, 0), (2, 4, 2, 2), (2, 4, 2, -1), (2, 5, 2, 0), (2, 2, 2, 0),
                 (True, 4, 2, 0), (2, 4.0, 2, 0)]:
        assert_raises(ValueError, interleaved_peak, *args, what=f"interleaved_peak{args}")
