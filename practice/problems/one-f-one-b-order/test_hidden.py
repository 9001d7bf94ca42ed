import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.plan import Op, Plan
from course.sim import simulate

from submission import one_f_one_b_order


def shape(order, m, what):
    """The number of forwards before the first backward, after checking the 1F1B shape."""
    want_f = [f"F{i}" for i in range(m)]
    want_b = [f"B{i}" for i in range(m)]
    if not isinstance(order, list) or sorted(order) != sorted(want_f + want_b):
        raise CheckFailed(f"{what}: 应该恰好包含 F0..F{m - 1} 和 B0..B{m - 1} 各一次")
    if [o for o in order if o[0] == "F"] != want_f or [o for o in order if o[0] == "B"] != want_b:
        raise CheckFailed(f"{what}: micro-batch 要按编号顺序处理")
    lead = order.index("B0")
    if rebuilt(m, lead) != order:
        raise CheckFailed(f"{what}: 形状应该是 warm-up 的 forward、然后 F/B 交替、最后剩下的 B")
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


def check(p, m, costs, what):
    orders = [one_f_one_b_order(p, m, s) for s in range(p)]
    leads = [shape(orders[s], m, f"{what} stage {s}") for s in range(p)]
    gpipe = makespan(p, m, [rebuilt(m, m) for _ in range(p)], costs)
    ours = makespan(p, m, orders, costs)
    assert_true(ours <= gpipe * (1 + 1e-9),
                f"{what}: makespan {ours:g} 比 GPipe 的 {gpipe:g} 长（或者死锁了）")
    for s in range(p):
        if leads[s] > 1:
            fewer = list(orders)
            fewer[s] = rebuilt(m, leads[s] - 1)
            worse = makespan(p, m, fewer, costs)
            assert_true(worse > ours * (1 + 1e-9),
                        f"{what}: stage {s} 少做一个 warm-up forward 也不变坏（makespan {worse:g}），warm-up 还能更短")


def test_textbook_case():
    check(4, 8, Costs(f=1, b=1, w=1), "p=4 m=8")


def test_fewer_microbatches_than_stages():
    check(6, 2, Costs(f=1, b=1, w=1), "p=6 m=2")
    check(5, 3, Costs(f=1, b=1, w=1), "p=5 m=3")


def test_random_shapes_and_costs():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(25):
        p, m = rng.randint(1, 8), rng.randint(1, 16)
        f = rng.uniform(0.5, 2)
        check(p, m, Costs(f=f, b=f * rng.uniform(0.3, 3), w=0.0), f"p={p} m={m} (seed={seed})")
    assert_not_using(one_f_one_b_order, "course.schedules")


def test_bad_arguments():
    for args in [(0, 4, 0), (4, 0, 0), (4, 4, -1), (4, 4, 4), (True, 4, 0), (4, 4.0, 0), (4, 4, None)]:
        assert_raises(ValueError, one_f_one_b_order, *args, what=f"one_f_one_b_order{args}")
