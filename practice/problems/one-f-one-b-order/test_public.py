from course.checks import assert_equal, assert_not_using, assert_raises

from submission import one_f_one_b_order


def test_last_stage_needs_no_warm_up():
    assert_equal(one_f_one_b_order(4, 3, 3), "F0 B0 F1 B1 F2 B2".split(), "one_f_one_b_order(4, 3, 3)",
                 "最后一个 stage 算完 forward 马上就能算 loss 和 backward")
    assert_not_using(one_f_one_b_order, "course.schedules")


def test_stage_out_of_range():
    assert_raises(ValueError, one_f_one_b_order, 4, 8, 4, hint="stage 只能是 0..p-1")
