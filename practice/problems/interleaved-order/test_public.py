from course.checks import assert_equal, assert_not_using, assert_raises

from submission import interleaved_order


def test_two_ranks_two_chunks():
    assert_equal(interleaved_order(2, 4, 2, 0),
                 "F0.s0 F1.s0 F0.s2 F1.s2 F2.s0 B0.s2 F3.s0 B1.s2 F2.s2 B0.s0 F3.s2 B1.s0 B2.s2 B3.s2 B2.s0 B3.s0".split(),
                 "interleaved_order(2, 4, 2, 0)")
    assert_equal(interleaved_order(2, 4, 2, 1),
                 "F0.s1 F1.s1 F0.s3 B0.s3 F1.s3 B1.s3 F2.s1 B0.s1 F3.s1 B1.s1 F2.s3 B2.s3 F3.s3 B3.s3 B2.s1 B3.s1".split(),
                 "interleaved_order(2, 4, 2, 1)")
    assert_not_using(interleaved_order, "course")


def test_needs_m_divisible_by_p():
    assert_raises(ValueError, interleaved_order, 4, 6, 2, 0, hint="m 必须是 p 的倍数 (m divisible by p)")
