import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Op, Plan
from course.sim import simulate

from submission import one_f_one_b_orders


def shape(order, m, what):
    """The number of forwards before the first backward, after checking the 1F1B shape."""
    want_f = [f"F{i}" for i in range(m)]
    want_b = [f"B{i}" for i in range(m)]
    if not isinstance(order, list) or sorted(order) != sorted(want_f + want_b):
        raise CheckFailed(tr(f"{what}：应该恰好包含 F0..F{m - 1} 和 B0..B{m - 1} 各一次",
                             f"{what}: should hold each of F0..F{m - 1} and B0..B{m - 1} exactly once"))
    if [o for o in order if o[0] == "F"] != want_f or [o for o in order if o[0] == "B"] != want_b:
        raise CheckFailed(tr(f"{what}：micro-batch 要按编号顺序处理",
                             f"{what}: micro-batches go in the order of their numbers"))
    lead = order.index("B0")
    if rebuilt(m, lead) != order:
        raise CheckFailed(tr(f"{what}：形状应该是 warm-up 的 forward、然后 F/B 交替、最后剩下的 B",
                             f"{what}: the shape is warm-up forwards, then F/B alternating, then the remaining B's"))
    return lead


def rebuilt(m, lead):
    """The 1F1B-shaped order with ``lead`` forwards before the first backward."""
    order = [f"F{i}" for i in range(lead)] + ["B0"]
    nf, nb = lead, 1
    while nb < m:
        if nf < m:
            order.append(f"F{nf}")
            nf += 1
        order.append(f"B{nb}")
        nb += 1
    return order


def makespan(p, m, orders, costs):
    plan = Plan([[Op(t[0], int(t[1:]), s) for t in orders[s]] for s in range(p)], m)
    try:
        return simulate(plan, costs).makespan
    except ValueError:       # PlanError or DeadlockError: worse than any makespan
        return float("inf")


def check(p, m, f, b, comm, what):
    orders = one_f_one_b_orders(p, m, f, b, comm)
    if not isinstance(orders, list) or len(orders) != p:
        raise CheckFailed(tr(f"{what}：应该返回 {p} 个列表（每个 stage 一个）",
                             f"{what}: should return {p} lists (one per stage)"))
    leads = [shape(orders[s], m, f"{what} stage {s}") for s in range(p)]
    costs = Costs(f=f, b=b, w=0.0, comm=comm)
    gpipe = makespan(p, m, [rebuilt(m, m) for _ in range(p)], costs)
    ours = makespan(p, m, orders, costs)
    assert_true(ours <= gpipe * (1 + 1e-9), tr(
        f"{what}：makespan {ours:g} 比 GPipe 的 {gpipe:g} 长（或者死锁了）",
        f"{what}: makespan {ours:g} is longer than GPipe's {gpipe:g} (or the plan deadlocks)"))
    for s in range(p):
        if leads[s] > 1:
            fewer = list(orders)
            fewer[s] = rebuilt(m, leads[s] - 1)
            worse = makespan(p, m, fewer, costs)
            assert_true(worse > gpipe * (1 + 1e-9), tr(
                f"{what}：stage {s} 少做一个 warm-up forward 也不比 GPipe 慢（makespan {worse:g}），warm-up 还能更短",
                f"{what}: with one warm-up forward fewer on stage {s} the plan is still no slower than GPipe "
                f"(makespan {worse:g}): the warm-up can be shorter"))


def test_no_latency():
    check(4, 8, 1.0, 2.0, 0.0, "p=4 m=8 comm=0")
    check(6, 2, 1.0, 2.0, 0.0, "p=6 m=2 comm=0")


def test_latency():
    check(4, 8, 1.0, 2.0, 0.5, "p=4 m=8 comm=0.5")
    check(6, 12, 1.0, 1.0, 1.0, "p=6 m=12 comm=1")


def test_random_shapes_costs_and_latency():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(25):
        p, m = rng.randint(1, 8), rng.randint(1, 16)
        f = rng.uniform(0.5, 2)
        b = f * rng.uniform(0.3, 3)
        comm = rng.choice([0.0, rng.uniform(0.05, 1.5)])
        check(p, m, f, b, comm, f"p={p} m={m} f={f:.3g} b={b:.3g} comm={comm:.3g} (seed={seed})")
    assert_not_using(one_f_one_b_orders, "course.schedules")


def test_bad_arguments():
    for args in [(0, 4, 1.0, 2.0, 0.0), (4, 0, 1.0, 2.0, 0.0), (True, 4, 1.0, 2.0, 0.0), (4, 4.0, 1.0, 2.0, 0.0),
                 (4, 4, 0.0, 2.0, 0.0), (4, 4, 1.0, -2.0, 0.0), (4, 4, 1.0, 2.0, -0.1),
                 (4, 4, float("nan"), 2.0, 0.0), (4, 4, 1.0, 2.0, float("inf")), (4, 4, "1", 2.0, 0.0),
                 (4, 4, 1.0, 2.0, None)]:
        assert_raises(ValueError, one_f_one_b_orders, *args, what=f"one_f_one_b_orders{args}")
