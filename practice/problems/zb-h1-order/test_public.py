from course.checks import CheckFailed, assert_close, assert_not_using, assert_raises
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.sim import simulate

from submission import zb_h1_order


def test_p3_m4_unit_costs():
    ranks = [zb_h1_order(3, 4, r) for r in range(3)]
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in ranks), 4), Costs(f=1, b=1, w=1))
    except PlanError as e:
        raise CheckFailed(tr(f"p=3, m=4: 不是合法的 plan 或者会死锁：{e}",
                             f"p=3, m=4: not a valid plan, or it deadlocks: {e}")) from None
    assert_close(tl.makespan, 4 * 3 + 2 * 1, tr("p=3, m=4, F=B=W=1 的 makespan", "the makespan at p=3, m=4, F=B=W=1"),
                 tr("目标是 m(F+B+W) + (p-1)(F+B-W)", "the target is m(F+B+W) + (p-1)(F+B-W)"))
    assert_not_using(zb_h1_order, "course")


def test_rank_out_of_range():
    assert_raises(ValueError, zb_h1_order, 3, 4, 3)
