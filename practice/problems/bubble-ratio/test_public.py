from course.checks import assert_close, assert_raises

from submission import bubble_ratio


def test_textbook_values():
    assert_close(bubble_ratio(4, 8), 3 / 11, "bubble_ratio(4, 8)")
    assert_close(bubble_ratio(4, 8, v=2), 3 / 19, "bubble_ratio(4, 8, v=2)")
    assert_close(bubble_ratio(8, 32), 7 / 39, "bubble_ratio(8, 32)")


def test_single_stage_has_no_bubble():
    assert_close(bubble_ratio(1, 5), 0.0, "bubble_ratio(1, 5)", "p = 1 时没有流水线 (no pipeline)，bubble 为 0")


def test_rejects_zero_stages():
    assert_raises(ValueError, bubble_ratio, 0, 4, hint="p 必须是正整数 (positive int)")
