from course.checks import assert_close, assert_not_using, assert_raises
from course.i18n import tr

from submission import flow_makespan, two_stage_order


def test_two_microbatches():
    assert_close(flow_makespan([(3, 2), (1, 4)], [0, 1]), 9.0, "flow_makespan([(3, 2), (1, 4)], [0, 1])")
    assert_close(flow_makespan([(3, 2), (1, 4)], [1, 0]), 7.0, "flow_makespan([(3, 2), (1, 4)], [1, 0])")
    assert_close(flow_makespan([(3, 2), (1, 4)], two_stage_order([(3, 2), (1, 4)])), 7.0,
                 tr("two_stage_order([(3, 2), (1, 4)]) 的 makespan", "makespan of two_stage_order([(3, 2), (1, 4)])"))
    assert_not_using(flow_makespan, "course")
    assert_not_using(two_stage_order, "course")


def test_rejects_bad_order():
    assert_raises(ValueError, flow_makespan, [(1, 1), (2, 2)], [0, 0],
                  hint=tr("order 要是 0..n-1 的一个排列", "order must be a permutation of 0..n-1"))
