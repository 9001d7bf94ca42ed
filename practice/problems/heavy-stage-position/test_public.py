from course.checks import assert_close, assert_equal, assert_not_using, assert_raises

from submission import best_positions, makespan_heavy_last


def test_one_stage_has_no_choice():
    assert_equal(best_positions(1, 4, 2.0), [0], "best_positions(1, 4, 2.0)")


def test_equal_stages_tie_everywhere():
    assert_equal(best_positions(3, 6, 1.0), [0, 1, 2], "best_positions(3, 6, 1.0)", "h = 1 时所有位置一样")


def test_heavy_last_single_stage():
    assert_close(makespan_heavy_last(1, 2, 2.0), 12.0, "makespan_heavy_last(1, 2, 2.0)")
    assert_not_using(makespan_heavy_last, "course")


def test_bad_h():
    assert_raises(ValueError, makespan_heavy_last, 4, 8, 0.5, hint="h 必须 >= 1")
