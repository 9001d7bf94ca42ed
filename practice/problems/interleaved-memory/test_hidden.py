import random

from course.checks import assert_close, assert_not_using, assert_raises, fresh_seed
from course.i18n import tr
from course.schedules import build
from course.sim import simulate

from submission import flex_peak


def accepted(p, m):
    return m % max(1, m // p) == 0


def check_against_the_simulator(p, m, v, ranks, what, hint):
    peaks = simulate(build("interleaved-flex", p, m, v=v)).peak_activations
    for r in ranks:
        assert_close(flex_peak(p, m, v, r), peaks[r], f"flex_peak({p}, {m}, {v}, {r}){what}", hint,
                     rel=1e-9, abs_tol=1e-9)


def test_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(30):
        p, v = rng.randint(1, 8), rng.randint(2, 4)
        m = rng.choice([k for k in range(1, 4 * p + 1) if accepted(p, k)])
        check_against_the_simulator(p, m, v, [rng.randrange(p)], f" (seed={seed})",
                                    tr("组有多大？第一个 backward 开始时，这个 rank 已经开始了几个 forward？",
                                       "how large is a group? How many forwards has this rank started when its "
                                       "first backward begins?"))
    assert_not_using(flex_peak, "course")


def test_groups_larger_than_p():
    for p, m, v in [(4, 5, 2), (4, 7, 2), (4, 10, 3), (6, 14, 2), (3, 8, 4), (8, 18, 2)]:
        check_against_the_simulator(p, m, v, range(p), "", tr(
            "m 不是 p 的倍数时，每组不是 p 个", "when p does not divide m, a group does not hold p micro-batches"))


def test_few_micro_batches():
    for p, m, v in [(4, 1, 2), (4, 3, 2), (4, 4, 2), (5, 5, 3), (8, 2, 4), (1, 3, 2)]:
        check_against_the_simulator(p, m, v, range(p), "", tr(
            "m <= p 时，一个 rank 的前向可能不够凑满 warm-up；m = p 时，torch 的顺序和 Megatron 的不一样",
            "with m <= p a rank may have fewer forwards than its warm-up; at m = p torch's order is not "
            "Megatron's"))


def test_bad_arguments():
    for args in [(0, 4, 2, 0), (2, 0, 2, 0), (2, 4, 1, 0), (2, 4, 2, 2), (2, 4, 2, -1), (4, 9, 2, 0), (4, 11, 2, 1),
                 (True, 4, 2, 0), (2, 4.0, 2, 0), (2, 4, 2, 0.0)]:
        assert_raises(ValueError, flex_peak, *args, what=f"flex_peak{args}")
