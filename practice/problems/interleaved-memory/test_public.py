from course.checks import assert_close, assert_not_using, assert_raises

from submission import interleaved_peak


def test_last_rank_of_two():
    assert_close(interleaved_peak(2, 4, 2, 1), 1.5, "interleaved_peak(2, 4, 2, 1)", "一个 chunk 是 1/v 个 stage")
    assert_not_using(interleaved_peak, "course")


def test_m_below_2p_is_rejected():
    assert_raises(ValueError, interleaved_peak, 4, 4, 2, 0, hint="本题要求 m >= 2p")
