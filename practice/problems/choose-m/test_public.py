from course.checks import assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import choose_m


def test_no_overhead_means_as_many_as_possible():
    assert_equal(choose_m(4, 16, 0.0, 1.0), 16, "choose_m(4, 16, t0=0, c=1)",
                 tr("没有固定开销时 bubble 越小越好", "without a fixed cost, the smaller the bubble the better"))


def test_overhead_limits_m():
    assert_equal(choose_m(4, 64, 1.0, 0.1), 4, "choose_m(4, 64, t0=1, c=0.1)")
    assert_not_using(choose_m, "course")


def test_no_m_fits():
    assert_raises(ValueError, choose_m, 4, 16, 0.0, 1.0, 1.0, 1.0, what="choose_m(..., act=1, cap=1)")
