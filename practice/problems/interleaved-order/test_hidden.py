import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan
from course.sim import simulate

from submission import interleaved_order


def sequences(p, m, v, r):
    """The forward and backward sequences of rank r (groups of p micro-batches, chunk by chunk)."""
    fw, bw = [], []
    for group in range(m // p):
        for c in range(v):
            fw += [f"F{group * p + i}.s{c * p + r}" for i in range(p)]
            bw += [f"B{group * p + i}.s{(v - 1 - c) * p + r}" for i in range(p)]
    return fw, bw


def rebuilt(fw, bw, lead):
    order = fw[:lead] + [bw[0]]
    nf, nb = lead, 1
    while nb < len(bw):
        if nf < len(fw):
            order.append(fw[nf])
            nf += 1
        order.append(bw[nb])
        nb += 1
    return order


def makespan(p, m, v, orders, costs):
    text = "\n".join(" ".join(o) for o in orders)
    placement = [[c * p + r for c in range(v)] for r in range(p)]
    try:
        return simulate(Plan.parse(text, m, placement=placement), costs).makespan
    except ValueError:
        return float("inf")


def check(p, m, v, costs, what):
    orders, leads, seqs = [], [], []
    for r in range(p):
        order = interleaved_order(p, m, v, r)
        fw, bw = sequences(p, m, v, r)
        if not isinstance(order, list) or [o for o in order if o[:1] == "F"] != fw or \
                [o for o in order if o[:1] == "B"] != bw or len(order) != 2 * m * v:
            raise CheckFailed(f"{what} rank {r}: " + tr(
                "forward 或 backward 的顺序不对（先按组、组内按 chunk，backward 的 chunk 顺序相反）",
                "the order of the forwards or of the backwards is wrong (group by group, chunk by chunk within a "
                "group, the backwards' chunks in reverse)"))
        lead = order.index(bw[0])
        if rebuilt(fw, bw, lead) != order:
            raise CheckFailed(f"{what} rank {r}: " + tr("形状应该是 warm-up、F/B 交替、剩下的 B",
                                                        "the shape must be warm-up, F/B alternating, the B's left"))
        orders.append(order)
        leads.append(lead)
        seqs.append((fw, bw))
    all_forward = makespan(p, m, v, [fw + bw for fw, bw in seqs], costs)
    ours = makespan(p, m, v, orders, costs)
    assert_true(ours <= all_forward * (1 + 1e-9),
                f"{what}: " + tr(f"makespan {ours:g} 比先做完所有 forward 的 {all_forward:g} 长（或者死锁了）",
                                 f"makespan {ours:g} is longer than the {all_forward:g} of all forwards first (or it "
                                 "deadlocked)"))
    for r in range(p):
        if leads[r] > 1:
            fewer = list(orders)
            fewer[r] = rebuilt(*seqs[r], leads[r] - 1)
            worse = makespan(p, m, v, fewer, costs)
            assert_true(worse > ours * (1 + 1e-9),
                        f"{what}: " + tr(f"rank {r} 少做一个 warm-up forward 也不变坏（makespan {worse:g}），"
                                         "warm-up 还能更短",
                                         f"rank {r} with one warm-up forward fewer is no worse (makespan {worse:g}): "
                                         "the warm-up can be shorter"))


def test_textbook_cases():
    check(4, 8, 2, Costs(f=1, b=1, w=1), "p=4 m=8 v=2")
    check(2, 4, 3, Costs(f=1, b=1, w=1), "p=2 m=4 v=3")


def test_random_shapes_and_costs():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(12):
        p, v = rng.randint(1, 5), rng.randint(1, 4)
        m = p * rng.randint(1, 3)
        f = rng.uniform(0.5, 2)
        check(p, m, v, Costs(f=f, b=f * rng.uniform(0.5, 2.5), w=0.0), f"p={p} m={m} v={v} (seed={seed})")
    assert_not_using(interleaved_order, "course.schedules")


def test_bad_arguments():
    for args in [(0, 4, 2, 0), (2, 0, 2, 0), (2, 4, 0, 0), (2, 4, 2, 2), (2, 4, 2, -1), (True, 4, 2, 0),
                 (2, 4.0, 2, 0), (2, 3, 2, 0)]:
        assert_raises(ValueError, interleaved_order, *args, what=f"interleaved_order{args}")
