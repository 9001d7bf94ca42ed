import random

from course.checks import assert_close, assert_raises, fresh_seed

from submission import bubble_ratio


def test_edge_cases():
    assert_close(bubble_ratio(1, 1), 0.0, "bubble_ratio(1, 1)")
    assert_close(bubble_ratio(4, 1), 3 / 4, "bubble_ratio(4, 1)", "m = 1：只有一个 micro-batch")
    assert_close(bubble_ratio(8, 2), 7 / 9, "bubble_ratio(8, 2)", "m < p 也要按公式算")
    assert_close(bubble_ratio(2, 3, 4), 1 / 13, "bubble_ratio(2, 3, 4)")


def test_bad_arguments():
    for args in [(0, 4), (4, 0), (4, 4, 0), (-1, 4), (4, -2), (True, 4), (4, True), (4, 4, False),
                 (2.0, 4), (4, 2.5), (4, 4, 1.0), ("4", 4), (None, 4), (4, 4, None)]:
        assert_raises(ValueError, bubble_ratio, *args, what=f"bubble_ratio{args}",
                      hint="p、m、v 都必须是正整数 (positive int)，bool 和 float 都不算")


def test_random_cases():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(200):
        p, m, v = rng.randint(1, 64), rng.randint(1, 512), rng.randint(1, 8)
        assert_close(bubble_ratio(p, m, v), (p - 1) / (v * m + p - 1), f"bubble_ratio({p}, {m}, {v}) (seed={seed})")
