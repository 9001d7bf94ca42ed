from course.checks import assert_close, assert_not_using, assert_raises
from course.i18n import tr

from submission import flex_peak


def test_ten_micro_batches_on_four_ranks():
    assert_close(flex_peak(4, 10, 2, 0), 6.0, "flex_peak(4, 10, 2, 0)",
                 tr("第 4 章 §6 的表里量过这一格：两轮，每组 5 个", "chapter 4 §6 measures this case in its table: two "
                    "rounds of 5"))
    assert_not_using(flex_peak, "course")


def test_a_refused_m():
    assert_raises(ValueError, flex_peak, 4, 9, 2, 0,
                  hint=tr("m=9、p=4 时有 2 轮，9 不能被 2 整除", "with m=9 and p=4 there are 2 rounds, and 2 does not "
                          "divide 9"))
