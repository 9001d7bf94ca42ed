from course.checks import assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import interleaved_order


def test_one_chunk_is_1f1b_shaped():
    assert_equal(interleaved_order(2, 2, 1, 1), "F0.s1 B0.s1 F1.s1 B1.s1".split(), "interleaved_order(2, 2, 1, 1)")
    assert_not_using(interleaved_order, "course.schedules")


def test_m_must_be_a_multiple_of_p():
    assert_raises(ValueError, interleaved_order, 4, 6, 2, 0, hint=tr("本题要求 m 是 p 的倍数",
                                                                     "m must be a multiple of p here"))
