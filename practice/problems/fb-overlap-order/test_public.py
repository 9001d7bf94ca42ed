from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.sim import simulate

from submission import paired_order


def test_two_ranks_use_pairs():
    ranks = [paired_order(2, 4, r) for r in range(2)]
    try:
        plan = Plan.parse("\n".join(" ".join(o) for o in ranks), 4, placement=[[0, 3], [1, 2]])
        tl = simulate(plan, Costs(f=1, b=2, w=0, overlap=0.7))
    except PlanError as e:
        raise CheckFailed(tr(f"p=2 m=4：不是 V 形放置上合法的 plan，或者会死锁：{e}",
                             f"p=2 m=4: not a valid plan on the V placement, or it deadlocks: {e}")) from None
    assert_true(any("&" in t for o in ranks for t in o),
                tr("p=2 m=4：没有用到 F&B 重叠的一对", "p=2 m=4: no overlapped F&B pair is used"))
    assert_true(max(tl.peak_activations) <= 3 + 1e-9,
                tr(f"p=2 m=4：峰值激活 {max(tl.peak_activations):g} 超过了 p + 1 = 3",
                   f"p=2 m=4: the activations peak at {max(tl.peak_activations):g}, above p + 1 = 3"))
    assert_true(tl.makespan < 15 * 0.9,
                tr(f"p=2 m=4 overlap=0.7：makespan {tl.makespan:g}，1F1B 是 15，要求至少短 10%",
                   f"p=2 m=4 overlap=0.7: makespan {tl.makespan:g}, 1F1B takes 15; at least 10% shorter is required"))
    assert_not_using(paired_order, "course.schedules")


def test_rank_out_of_range():
    assert_raises(ValueError, paired_order, 2, 4, 2)
