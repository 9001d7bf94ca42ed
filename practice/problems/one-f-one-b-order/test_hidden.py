import random

from course.checks import assert_equal, assert_not_using, assert_raises, fresh_seed
from course.schedules import build

from submission import one_f_one_b_order


def expected(p, m, s):
    return build("1f1b", p, m).rank_tokens(s)


def test_fewer_microbatches_than_stages():
    for s in range(6):
        assert_equal(one_f_one_b_order(6, 2, s), expected(6, 2, s), f"one_f_one_b_order(6, 2, {s})",
                     "m < p 时 warm-up 最多只有 m 个 forward")


def test_single_stage_and_single_microbatch():
    assert_equal(one_f_one_b_order(1, 5, 0), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4".split(), "one_f_one_b_order(1, 5, 0)")
    for s in range(3):
        assert_equal(one_f_one_b_order(3, 1, s), ["F0", "B0"], f"one_f_one_b_order(3, 1, {s})")


def test_bad_arguments():
    for args in [(0, 4, 0), (4, 0, 0), (4, 4, -1), (4, 4, 4), (True, 4, 0), (4, 4.0, 0), (4, 4, None)]:
        assert_raises(ValueError, one_f_one_b_order, *args, what=f"one_f_one_b_order{args}")


def test_random_shapes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(60):
        p, m = rng.randint(1, 12), rng.randint(1, 24)
        s = rng.randrange(p)
        assert_equal(one_f_one_b_order(p, m, s), expected(p, m, s), f"one_f_one_b_order({p}, {m}, {s}) (seed={seed})")
    assert_not_using(one_f_one_b_order, "course")
