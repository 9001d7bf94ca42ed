from course.checks import assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import p2p_hops, v_placement


def test_four_ranks():
    assert_equal(v_placement(3, 1), [[0], [1], [2]], "v_placement(3, 1)",
                 tr("一个 chunk 时就是普通的流水线", "with one chunk it is the plain pipeline"))
    assert_equal(p2p_hops([[0, 4], [1, 5], [2, 6], [3, 7]]), 7, "p2p_hops(interleaved p=4 v=2)")
    assert_not_using(v_placement, "course")
    assert_not_using(p2p_hops, "course")


def test_rejects_duplicate_stage():
    assert_raises(ValueError, p2p_hops, [[0, 1], [1, 2]], hint=tr("stage 1 放了两次", "stage 1 is placed twice"))
