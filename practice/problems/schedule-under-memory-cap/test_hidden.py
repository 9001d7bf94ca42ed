import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.search import search
from course.sim import simulate

from submission import schedule_under_cap

MARGIN = 1.25   # a greedy list scheduler's reach: the reference stays within 1.16 on 6000 random problems


def check(p, m, f, b, w, cap, w_mem, what):
    orders = schedule_under_cap(p, m, f, b, w, cap, w_mem)
    if type(orders) is not list or len(orders) != p or \
            not all(type(o) is list and all(type(t) is str for t in o) for o in orders):
        raise CheckFailed(tr(f"{what}: 要返回 {p} 个 rank，每个 rank 一个 token 字符串列表",
                                  f"{what}: return {p} ranks, each a list of token strings"))
    costs = Costs(f=f, b=b, w=w, w_mem=w_mem)
    try:
        tl = simulate(Plan.parse("\n".join(" ".join(o) for o in orders), m), costs)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}: 不是合法的 plan 或者会死锁 (deadlock)：{e}",
                             f"{what}: not a valid plan, or it deadlocks: {e}")) from None
    if not all(any(t.startswith("W") for t in o) for o in orders):
        raise CheckFailed(tr(f"{what}: backward 要拆成 B 和 W", f"{what}: split the backward into B and W"))
    for r, peak in enumerate(tl.peak_activations):
        assert_true(peak <= cap + 1e-9, tr(f"{what}: rank {r} 的峰值激活是 {peak:g}，超过了上限 {cap:g}",
                                                        f"{what}: rank {r} peaks at {peak:g} activations, above the "
                                                        f"cap {cap:g}"))
    ref = search(p, m, costs, cap).makespan
    assert_true(tl.makespan <= MARGIN * ref * (1 + 1e-9),
                tr(f"{what}: makespan {tl.makespan:.4g} 超过了 course.search 的 {ref:.4g} 的 {MARGIN} 倍",
                   f"{what}: makespan {tl.makespan:.4g} is more than {MARGIN} times course.search's {ref:.4g}"))


def test_one_rank_and_tight_caps():
    check(1, 4, 1.0, 1.0, 1.0, 1.0, 1.0, "p=1 m=4 cap=1")
    check(4, 8, 1.0, 1.0, 1.0, 1.0, 0.5, "p=4 m=8 cap=1 w_mem=0.5")
    check(4, 8, 1.0, 2.0, 1.0, 1.5, 1.0, "p=4 m=8 cap=1.5")


def test_zero_bubble_caps():
    check(4, 8, 1.0, 1.0, 1.0, 4.0, 1.0, tr("p=4 m=8 cap=p (ZB-H1 的内存)", "p=4 m=8 cap=p (ZB-H1's memory)"))
    check(4, 8, 1.0, 1.0, 1.0, 7.0, 1.0, tr("p=4 m=8 cap=2p-1 (ZB-H2 的内存)", "p=4 m=8 cap=2p-1 (ZB-H2's memory)"))


def test_random_problems():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(12):
        p = rng.randint(1, 6)
        m = rng.randint(1, 3 * p)
        f, b, w = (round(rng.uniform(0.5, 2), 3) for _ in range(3))
        cap = rng.choice([1.0, 1.5, 2.0, float(p), p + 0.5, float(2 * p - 1)])
        w_mem = rng.choice([0.5, 1.0])
        check(p, m, f, b, w, cap, w_mem, f"p={p} m={m} f={f} b={b} w={w} cap={cap} w_mem={w_mem} (seed={seed})")
    assert_not_using(schedule_under_cap, "course.search", "course.schedules")


def test_bad_arguments():
    for args in [(0, 4, 1.0, 1.0, 1.0, 2.0), (2, 0, 1.0, 1.0, 1.0, 2.0), (2, 4, -1.0, 1.0, 1.0, 2.0),
                 (2, 4, 1.0, float("nan"), 1.0, 2.0), (2, 4, 1.0, 1.0, 1.0, 0.99), (2, 4, 1.0, 1.0, 1.0, 2.0, 1.5),
                 (True, 4, 1.0, 1.0, 1.0, 2.0)]:
        assert_raises(ValueError, schedule_under_cap, *args, what=f"schedule_under_cap{args}")
