from course.checks import assert_equal, assert_not_using, assert_raises, assert_true
from course.i18n import tr

from submission import Deadlock, simulate


def test_two_stages_with_latency():
    got = simulate([["F0", "B0"], ["F0", "B0"]], f=[1, 2], b=[2, 4], comm=0.5)
    assert_equal(got, [[(0.0, 1.0), (8.0, 10.0)], [(1.5, 3.5), (3.5, 7.5)]],
                 "simulate([[F0, B0], [F0, B0]], f=[1, 2], b=[2, 4], comm=0.5)")


def test_gpipe_equal_costs():
    ranks = [["F0", "F1", "B0", "B1"]] * 2
    got = simulate(ranks, f=[1, 1], b=[2, 2])
    assert_equal(got, [[(0.0, 1.0), (1.0, 2.0), (5.0, 7.0), (7.0, 9.0)],
                       [(1.0, 2.0), (2.0, 3.0), (3.0, 5.0), (5.0, 7.0)]], "simulate(GPipe p=2 m=2)")


def test_deadlock_is_reported():
    ranks = [["F0", "B0", "F1", "B1"], ["F1", "F0", "B0", "B1"]]
    e = assert_raises(Deadlock, simulate, ranks, [1, 1], [2, 2],
                      what=tr("simulate(死锁的顺序)", "simulate(a deadlocking order)"))
    assert_true("rank" in str(e), tr(f"Deadlock 的信息要写出卡住的 rank，得到：{str(e)[:200]!r}",
                                   f"the Deadlock message must name the stuck rank, got: {str(e)[:200]!r}"))
    assert_not_using(simulate, "course")
