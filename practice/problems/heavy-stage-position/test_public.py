from course.checks import assert_close, assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import best_positions, makespan_heavy_first


def test_one_stage_has_no_choice():
    assert_equal(best_positions(1, 4, 2.0), [0], "best_positions(1, 4, 2.0)")


def test_equal_stages_tie_everywhere():
    assert_equal(best_positions(3, 6, 1.0), [0, 1, 2], "best_positions(3, 6, 1.0)",
                 tr("h = 1 时所有位置一样", "with h = 1 every position is the same"))


def test_heavy_first_examples():
    assert_close(makespan_heavy_first(1, 2, 2.0), 12.0, "makespan_heavy_first(1, 2, 2.0)")
    assert_close(makespan_heavy_first(4, 8, 1.5), 40.5, "makespan_heavy_first(4, 8, 1.5)",
                 tr("第 2 章 §6 的表里量过这一格", "chapter 2 §6 measures this case in its table"))
    assert_not_using(makespan_heavy_first, "course")


def test_bad_h():
    assert_raises(ValueError, makespan_heavy_first, 4, 8, 0.5, hint=tr("h 必须 >= 1", "h must be >= 1"))
