from course.checks import assert_equal, assert_not_using, assert_true
from course.costs import Costs
from course.i18n import tr
from course.plan import Op, Plan
from course.sim import simulate

from submission import one_f_one_b_orders


def test_last_stage_needs_no_warm_up():
    got = one_f_one_b_orders(4, 3, 1.0, 2.0, 0.0)
    assert_equal(got[3], "F0 B0 F1 B1 F2 B2".split(), "one_f_one_b_orders(4, 3, 1, 2, 0)[3]",
                 tr("最后一个 stage 算完 forward 马上就能算 loss 和 backward",
                    "the last stage can compute the loss and the backward as soon as its forward is done"))
    assert_not_using(one_f_one_b_orders, "course.schedules")


def test_latency_is_no_slower_than_gpipe():
    p, m, f, b, comm = 4, 8, 1.0, 2.0, 0.5
    orders = one_f_one_b_orders(p, m, f, b, comm)
    costs = Costs(f=f, b=b, w=0.0, comm=comm)
    ours = simulate(Plan([[Op(t[0], int(t[1:]), s) for t in orders[s]] for s in range(p)], m), costs).makespan
    gpipe = [f"F{i}" for i in range(m)] + [f"B{i}" for i in range(m)]
    ref = simulate(Plan([[Op(t[0], int(t[1:]), s) for t in gpipe] for s in range(p)], m), costs).makespan
    assert_true(ours <= ref * (1 + 1e-9), tr(
        f"p={p} m={m} comm={comm}：makespan {ours:g} 比 GPipe 的 {ref:g} 长",
        f"p={p} m={m} comm={comm}: makespan {ours:g} is longer than GPipe's {ref:g}"))
