from course.checks import assert_close, assert_not_using, assert_raises, assert_true
from course.costs import Costs
from course.i18n import tr
from course.plan import Op, Plan
from course.sim import simulate

from submission import steady_peaks

# Two ranks, one stage each, period 3: micro-batch 0 runs F0 at slot 0, F1 at 1, B1 at 2, B0 at 4 (slot 3 would
# share rank 0's residue with F0), W1 at 3, W0 at 5.
BLOCK = {("F", 0): 0, ("F", 1): 1, ("B", 1): 2, ("W", 1): 3, ("B", 0): 4, ("W", 0): 5}


def simulated(block, period, placement, act, w_mem, m=8):
    timed = [[] for _ in placement]
    rank_of = {s: r for r, held in enumerate(placement) for s in held}
    for i in range(m):
        for (kind, s), t in block.items():
            timed[rank_of[s]].append((t + i * period, Op(kind, i, s)))
    plan = Plan([[op for _, op in sorted(ops)] for ops in timed], m, placement=placement)
    return simulate(plan, Costs(act=list(act), w_mem=w_mem)).peak_activations


def test_two_ranks():
    for w_mem in (1.0, 0.5):
        got = steady_peaks(BLOCK, 3, [[0], [1]], [10.0, 10.0], w_mem)
        want = simulated(BLOCK, 3, [[0], [1]], [10.0, 10.0], w_mem)
        assert_true(type(got) is list and len(got) == 2,
                    tr("要返回一个列表，每个 rank 一个数", "return a list with one number per rank"))
        for r in range(2):
            assert_close(got[r], want[r], tr(f"w_mem={w_mem}: rank {r} 的峰值", f"w_mem={w_mem}: rank {r}'s peak"),
                         tr("峰值 = 同一时刻还活着的副本数 × 每份的字节",
                            "peak = copies alive at once x bytes per copy"))
    assert_not_using(steady_peaks, "course")


def test_period_must_be_positive():
    assert_raises(ValueError, steady_peaks, BLOCK, 0, [[0], [1]], [10.0, 10.0], 1.0,
                  hint=tr("period 是正整数", "period is a positive integer"))
