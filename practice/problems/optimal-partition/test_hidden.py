import itertools
import random

from course.checks import CheckFailed, assert_close, assert_not_using, assert_raises, fresh_seed
from course.i18n import tr

from submission import partition


def bottleneck(costs, sizes, what):
    if type(sizes) is not list or len(sizes) == 0 or any(type(s) is not int or s < 1 for s in sizes) \
            or sum(sizes) != len(costs):
        raise CheckFailed(tr(f"{what}: 要返回每个 stage 的层数 (list of positive int，总和 {len(costs)})",
                             f"{what}: must return each stage's number of layers (positive ints summing to "
                             f"{len(costs)})"))
    out, start = 0.0, 0
    for s in sizes:
        out = max(out, float(sum(costs[start:start + s])))
        start += s
    return out


def brute_force(costs, p):
    n = len(costs)
    return min(bottleneck(costs, [b - a for a, b in zip((0,) + cuts, cuts + (n,))], "") for cuts in
               itertools.combinations(range(1, n), p - 1))


def binary_search(costs, p):
    """The optimum by bisection on the answer over the candidate stage sums (independent of the learner's DP)."""
    prefix = [0]
    for c in costs:
        prefix.append(prefix[-1] + c)
    candidates = sorted({prefix[j] - prefix[i] for i in range(len(costs)) for j in range(i + 1, len(costs) + 1)})

    def fits(limit):
        stages, acc = 1, 0
        for c in costs:
            if c > limit:
                return False
            if acc + c > limit:
                stages, acc = stages + 1, c
            else:
                acc += c
        return stages <= p

    lo, hi = 0, len(candidates) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(candidates[mid]) else (mid + 1, hi)
    return candidates[lo]


def check(costs, p, what):
    got = bottleneck(costs, partition(list(costs), p), what)
    want = brute_force(costs, p) if len(costs) <= 12 else binary_search(costs, p)
    assert_close(got, want, tr(f"{what} 的瓶颈 (bottleneck)", f"bottleneck of {what}"),
                 tr("不是最优切分：试试动态规划 (dynamic programming)", "not an optimal cut: try dynamic programming"))


def test_greedy_is_not_enough():
    check([1, 1, 1, 1, 4], 2, "partition([1, 1, 1, 1, 4], 2)")
    check([5, 1, 1, 1, 1, 1, 5], 3, "partition([5, 1, 1, 1, 1, 1, 5], 3)")
    check([2, 2, 2, 9, 1, 1, 1], 3, "partition([2, 2, 2, 9, 1, 1, 1], 3)")


def test_edge_cases():
    check([7], 1, "partition([7], 1)")
    check([0, 0, 0], 2, "partition([0, 0, 0], 2)")
    check([3, 1, 2], 1, "partition([3, 1, 2], 1)")
    for args in [([], 1), ([1, 2], 0), ([1, 2], 3), ([1, 2], True), ([1, -2], 1), ([1, 2], 1.0)]:
        assert_raises(ValueError, partition, *args, what=f"partition{args}")


def test_random_small():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.randint(1, 11)
        costs = [rng.choice([1, 1, 2, 3, 5, 8, 0.5, 12]) for _ in range(n)]
        check(costs, rng.randint(1, n), f"partition({costs}, p) (seed={seed})")


def test_large_uneven_model():
    seed = fresh_seed()
    rng = random.Random(seed)
    costs = [9] + [rng.choice([2, 3, 3, 4, 11]) for _ in range(240)] + [14]   # embedding ... lm_head
    check(costs, 8, tr(f"partition(242 层, p=8) (seed={seed})", f"partition(242 layers, p=8) (seed={seed})"))
    assert_not_using(partition, "course")
