from course.checks import assert_close, assert_not_using, assert_raises

from submission import attribute_idle


def test_a_perfect_two_rank_trace():
    # GPipe-shaped, p=2, m=1, F=1, B=2, exactly as simulated: all idle is the schedule's own bubble
    plan = [["F0", "B0"], ["F0", "B0"]]
    spans = [[(0.0, 1.0), (3.0, 5.0)], [(1.0, 2.0), (2.0, 3.0)]]
    got = attribute_idle(plan, spans)
    assert_close(got[0]["idle"], 2.0, "rank 0 的空闲")
    assert_close(got[0]["overhead"], 0.0, "rank 0 的 overhead", "trace 和重放一模一样时没有 overhead")
    assert_not_using(attribute_idle, "course.attribution")


def test_wrong_number_of_spans():
    assert_raises(ValueError, attribute_idle, [["F0", "B0"]], [[(0.0, 1.0)]])
