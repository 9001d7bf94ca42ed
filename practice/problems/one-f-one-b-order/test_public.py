from course.checks import assert_equal, assert_not_using, assert_raises

from submission import one_f_one_b_order


def test_four_stages_eight_microbatches():
    assert_equal(one_f_one_b_order(4, 8, 0),
                 "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7".split(), "one_f_one_b_order(4, 8, 0)")
    assert_equal(one_f_one_b_order(4, 8, 3),
                 "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7".split(), "one_f_one_b_order(4, 8, 3)")
    assert_equal(one_f_one_b_order(4, 8, 1),
                 "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7".split(), "one_f_one_b_order(4, 8, 1)")
    assert_not_using(one_f_one_b_order, "course")


def test_stage_out_of_range():
    assert_raises(ValueError, one_f_one_b_order, 4, 8, 4, hint="stage 只能是 0..p-1")
