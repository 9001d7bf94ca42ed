from course.checks import assert_close, assert_equal, assert_not_using, assert_raises

from submission import flow_makespan, johnson_order


def test_two_microbatches():
    assert_close(flow_makespan([(3, 2), (1, 4)], [0, 1]), 9.0, "flow_makespan([(3, 2), (1, 4)], [0, 1])")
    assert_close(flow_makespan([(3, 2), (1, 4)], [1, 0]), 7.0, "flow_makespan([(3, 2), (1, 4)], [1, 0])")
    assert_close(flow_makespan([(3, 2), (1, 4)], johnson_order([(3, 2), (1, 4)])), 7.0,
                 "johnson_order([(3, 2), (1, 4)]) 的 makespan")
    assert_not_using(flow_makespan, "course")
    assert_not_using(johnson_order, "course")


def test_rejects_bad_order():
    assert_raises(ValueError, flow_makespan, [(1, 1), (2, 2)], [0, 0], hint="order 要是 0..n-1 的一个排列")
