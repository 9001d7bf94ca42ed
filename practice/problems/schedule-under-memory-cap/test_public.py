from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.sim import simulate

from submission import schedule_under_cap


def test_two_ranks_one_activation_each():
    orders = schedule_under_cap(2, 4, 1.0, 1.0, 1.0, 1.0)
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in orders), 4), Costs(f=1, b=1, w=1))
    except PlanError as e:
        raise CheckFailed(tr(f"p=2 m=4 cap=1: 不是合法的 plan 或会死锁：{e}",
                             f"p=2 m=4 cap=1: not a valid plan, or it deadlocks: {e}")) from None
    assert_true(max(tl.peak_activations) <= 1.0, tr(f"p=2 m=4 cap=1: 峰值激活 {tl.peak_activations} 超过了 1",
                                                        f"p=2 m=4 cap=1: peak activations {tl.peak_activations} "
                                                        "exceed 1"))
    assert_not_using(schedule_under_cap, "course.search", "course.schedules")


def test_cap_below_one_activation():
    assert_raises(ValueError, schedule_under_cap, 2, 4, 1.0, 1.0, 1.0, 0.5, hint=tr("一份激活都放不下",
                                                                                    "not even one micro-batch fits"))
