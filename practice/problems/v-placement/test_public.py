from course.checks import assert_equal, assert_not_using, assert_raises

from submission import p2p_hops, v_placement


def test_four_ranks():
    assert_equal(v_placement(3, 1), [[0], [1], [2]], "v_placement(3, 1)", "一个 chunk 时就是普通的流水线")
    assert_equal(p2p_hops([[0, 4], [1, 5], [2, 6], [3, 7]]), 7, "p2p_hops(interleaved p=4 v=2)")
    assert_not_using(v_placement, "course")
    assert_not_using(p2p_hops, "course")


def test_rejects_duplicate_stage():
    assert_raises(ValueError, p2p_hops, [[0, 1], [1, 2]], hint="stage 1 放了两次")
