from course.checks import CheckFailed, assert_close, assert_not_using, assert_raises
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.sim import simulate

from submission import zb_h2_order


def test_p2_m3_has_no_idle():
    ranks = [zb_h2_order(2, 3, r) for r in range(2)]
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in ranks), 3), Costs(f=1, b=1, w=1))
    except PlanError as e:
        raise CheckFailed(tr(f"p=2, m=3: 不是合法的 plan 或者会死锁：{e}",
                             f"p=2, m=3: not a valid plan, or it deadlocks: {e}")) from None
    for r in range(2):
        assert_close(tl.idle[r], 0.0, tr(f"p=2, m=3: rank {r} 的空闲 (idle)", f"p=2, m=3: rank {r}'s idle time"))
    assert_not_using(zb_h2_order, "course")


def test_rank_out_of_range():
    assert_raises(ValueError, zb_h2_order, 2, 3, 2)
