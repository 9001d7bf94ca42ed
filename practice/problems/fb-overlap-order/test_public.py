from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true
from course.costs import Costs
from course.plan import Plan, PlanError
from course.sim import simulate

from submission import paired_order


def test_two_ranks_use_pairs():
    ranks = [paired_order(2, 4, r) for r in range(2)]
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in ranks), 4), Costs(f=1, b=2, w=0, overlap=0.7))
    except PlanError as e:
        raise CheckFailed(f"p=2 m=4: 不是合法的 plan 或会死锁：{e}") from None
    assert_true(any("&" in t for o in ranks for t in o), "p=2 m=4: 没有用到 F&B 重叠的一对")
    assert_true(tl.makespan < 15 * 0.9, f"p=2 m=4 overlap=0.7: makespan {tl.makespan:g}，1F1B 是 15")
    assert_not_using(paired_order, "course.schedules")


def test_rank_out_of_range():
    assert_raises(ValueError, paired_order, 2, 4, 2)
