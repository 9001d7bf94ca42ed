import random

from course.checks import CheckFailed, assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Plan, PlanError
from course.schedules import build
from course.sim import simulate

from submission import paired_order


def check(p, m, f, b, overlap, what):
    ranks = [paired_order(p, m, r) for r in range(p)]
    if not all(type(o) is list and all(type(t) is str for t in o) for o in ranks):
        raise CheckFailed(tr(f"{what}：每个 rank 要返回一个 token 字符串列表",
                             f"{what}: each rank must return a list of token strings"))
    costs = Costs(f=f, b=b, w=0, overlap=overlap)
    try:
        plan = Plan.parse("\n".join(" ".join(o) for o in ranks), m, placement=[[r, 2 * p - 1 - r] for r in range(p)])
        tl = simulate(plan, costs)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}：不是 V 形放置上合法的 plan，或者会死锁 (deadlock)：{e}",
                             f"{what}: not a valid plan on the V placement, or it deadlocks: {e}")) from None
    for r, peak in enumerate(tl.peak_activations):
        assert_true(peak <= p + 1 + 1e-9, tr(f"{what}：rank {r} 的峰值激活 {peak:g} 超过了 p + 1 = {p + 1}",
                                             f"{what}: rank {r}'s activations peak at {peak:g}, above p + 1 = {p + 1}"))
    base = simulate(build("1f1b", p, m), costs).makespan
    assert_true(tl.makespan <= base * (1 + 1e-9),
                tr(f"{what}：makespan {tl.makespan:.4g} 比 1F1B 的 {base:.4g} 长",
                   f"{what}: makespan {tl.makespan:.4g} is longer than 1F1B's {base:.4g}"))
    if p >= 2 and m >= 2 * p and overlap <= 0.75:
        assert_true(tl.makespan <= 0.9 * base * (1 + 1e-9),
                    tr(f"{what}：makespan {tl.makespan:.4g} 只比 1F1B 的 {base:.4g} 短 {1 - tl.makespan / base:.1%}，"
                       "要求至少 10%",
                       f"{what}: makespan {tl.makespan:.4g} is only {1 - tl.makespan / base:.1%} shorter than 1F1B's "
                       f"{base:.4g}; at least 10% is required"))


def test_edge_cases():
    for p, m in [(1, 1), (1, 5), (4, 1), (4, 3), (3, 6), (2, 4)]:
        check(p, m, 1.0, 2.0, 0.7, f"p={p} m={m}")


def test_no_overlap_is_never_worse():
    for p, m in [(4, 8), (3, 7), (5, 2)]:
        for f, b in [(1.0, 2.0), (2.0, 1.0)]:
            check(p, m, f, b, 1.0, f"p={p} m={m} F={f:g} B={b:g} overlap=1")


def test_random():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(30):
        p, overlap = rng.randint(1, 7), rng.uniform(0.5, 1.0)
        m = rng.randint(1, 4 * p)
        f = rng.uniform(0.5, 2)
        b = f * rng.uniform(0.5, 3)
        check(p, m, f, b, overlap, f"p={p} m={m} F={f:.3f} B={b:.3f} overlap={overlap:.3f} (seed={seed})")
    assert_not_using(paired_order, "course.schedules")


def test_bad_arguments():
    for args in [(0, 4, 0), (4, 0, 0), (4, 4, 4), (4, 4, -1), (True, 4, 0), (4, 4.0, 0)]:
        assert_raises(ValueError, paired_order, *args, what=f"paired_order{args}")
