import random

from course.checks import assert_equal, assert_not_using, assert_raises, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan
from course.schedules import build
from course.sim import DeadlockError, simulate as reference

from submission import Deadlock, simulate


def expected(ranks, f, b, comm):
    """The course library's simulator on the same order: spans or None for a deadlock."""
    plan = Plan.parse("\n".join(" ".join(r) for r in ranks))
    try:
        tl = reference(plan, Costs(f=f, b=b, w=0, comm=comm))
    except DeadlockError:
        return None
    return [[(s.start, s.end) for s in rank] for rank in tl.spans]


def check(ranks, f, b, comm, what):
    want = expected(ranks, f, b, comm)
    if want is None:
        assert_raises(Deadlock, simulate, ranks, f, b, comm, what=what,
                      hint=tr("这个顺序会死锁", "this order deadlocks"))
    else:
        assert_equal(simulate(ranks, f, b, comm), want, what)


def test_one_stage_and_one_microbatch():
    check([["F0", "B0", "F1", "B1"]], [1.5], [2.5], 0.0, "simulate(p=1)")
    check([["F0", "B0"]] * 4, [1, 2, 3, 4], [2, 1, 2, 1], 0.25, "simulate(m=1, p=4)")


def test_uneven_one_f_one_b():
    ranks = [build("1f1b", 4, 6).rank_tokens(s) for s in range(4)]
    check(ranks, [1.0, 3.0, 1.0, 2.0], [2.0, 1.0, 5.0, 2.5], 0.1, "simulate(1F1B p=4 m=6, uneven costs)")


def test_random_orders_and_costs():
    seed = fresh_seed()
    rng = random.Random(seed)
    for case in range(80):
        p, m = rng.randint(1, 5), rng.randint(1, 6)
        ranks = []
        for s in range(p):
            if case % 2:   # a random interleaving that keeps F i before B i on each rank (may deadlock)
                fs, bs, order = list(range(m)), list(range(m)), []
                while fs or bs:
                    if fs and (not bs or bs[0] >= fs[0] or rng.random() < 0.5):
                        order.append(f"F{fs.pop(0)}")
                    else:
                        order.append(f"B{bs.pop(0)}")
                ranks.append(order)
            else:
                ranks.append(build(rng.choice(["gpipe", "1f1b"]), p, m).rank_tokens(s))
        f = [rng.choice([0.5, 1.0, 1.25, 2.0, 3.0]) for _ in range(p)]
        b = [rng.choice([1.0, 2.0, 2.5, 4.0]) for _ in range(p)]
        comm = rng.choice([0.0, 0.0, 0.1, 0.75])
        check(ranks, f, b, comm, f"simulate(case {case}, p={p}, m={m}, seed={seed}) ranks={ranks}")
    assert_not_using(simulate, "course")
