import itertools
import random

from course.checks import assert_close, assert_equal, assert_not_using, assert_raises, assert_true, fresh_seed
from course.i18n import tr

from submission import flow_makespan, two_stage_order


def makespan(times, order):
    """Completion times by the flow-shop recurrence C[k][s] = max(C[k-1][s], C[k][s-1]) + t."""
    done = [0.0] * len(times[0])
    for i in order:
        for s, t in enumerate(times[i]):
            done[s] = max(done[s], done[s - 1] if s else 0.0) + t
    return done[-1]


def optimum(times):
    return min(makespan(times, list(o)) for o in itertools.permutations(range(len(times))))


def is_permutation(order, n):
    return type(order) is list and all(type(i) is int for i in order) and sorted(order) == list(range(n))


def check_optimal(times, what):
    order = two_stage_order(times)
    assert_true(is_permutation(order, len(times)),
                tr(f"{what} 要返回 0..{len(times) - 1} 的一个排列 (list of int)",
                   f"{what} must return a permutation of 0..{len(times) - 1} (a list of int)"))
    assert_close(makespan(times, order), optimum(times), tr(f"{what} 的 makespan", f"makespan of {what}"),
                 tr("交换相邻的两个 micro-batch 什么时候不会变坏？", "when does swapping two neighbours never hurt?"))


def test_flow_makespan_random():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(80):
        n, stages = rng.randint(1, 8), rng.randint(1, 6)
        times = [tuple(rng.choice([0.5, 1, 2, 3, 7]) for _ in range(stages)) for _ in range(n)]
        order = rng.sample(range(n), n)
        assert_close(flow_makespan(times, order), makespan(times, order),
                     f"flow_makespan({times}, {order}) (seed={seed})")


def test_mixed_microbatches_are_ordered_optimally():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(40):
        n = rng.randint(1, 7)
        times = [(rng.randint(1, 9), rng.randint(1, 9)) for _ in range(n)]
        check_optimal(times, f"two_stage_order({times}) (seed={seed})")
    assert_not_using(two_stage_order, "course")
    assert_not_using(flow_makespan, "course")


def test_no_single_sort_key_is_enough():
    # Sorting by a, by b or by a + b, ascending or descending, misses the optimum 31 here.
    times = [(6, 7), (6, 1), (9, 9), (6, 8)]
    check_optimal(times, f"two_stage_order({times})")
    # The proportional case of chapter 7 must still come out right: all heavier on stage 1, or all on stage 0.
    check_optimal([(1, 2), (3, 6), (0.5, 1), (2, 4)], "two_stage_order([(1, 2), (3, 6), (0.5, 1), (2, 4)])")
    check_optimal([(2, 1), (6, 3), (1, 0.5), (4, 2)], "two_stage_order([(2, 1), (6, 3), (1, 0.5), (4, 2)])")


def test_heaviest_first_is_not_always_optimal():
    times = [(1, 6), (6, 1), (3, 3)]   # heaviest first (0, 1, 2: weights 7, 7, 6) takes 13
    assert_close(makespan(times, two_stage_order(times)), 11.0,
                 tr(f"two_stage_order({times}) 的 makespan", f"makespan of two_stage_order({times})"))
    assert_close(flow_makespan(times, [0, 1, 2]), 13.0,
                 tr("最重的先做的 makespan", "makespan of heaviest first"))


def test_many_microbatches():
    seed = fresh_seed()
    rng = random.Random(seed)
    n = 20000
    times = [(rng.uniform(0.1, 10), rng.uniform(0.1, 10)) for _ in range(n)]
    order = two_stage_order(times)
    assert_true(is_permutation(order, n),
                tr(f"two_stage_order(n={n}) 要返回 0..{n - 1} 的一个排列",
                   f"two_stage_order(n={n}) must return a permutation of 0..{n - 1}"))
    first = sorted((i for i in range(n) if times[i][0] <= times[i][1]), key=lambda i: times[i][0])
    last = sorted((i for i in range(n) if times[i][0] > times[i][1]), key=lambda i: -times[i][1])
    assert_close(makespan(times, order), makespan(times, first + last),
                 tr(f"two_stage_order(n={n}) 的 makespan (seed={seed})",
                    f"makespan of two_stage_order(n={n}) (seed={seed})"),
                 tr("和最优的 makespan 比；穷举太慢",
                    "compared with the optimal makespan; exhaustive search is too slow"),
                 rel=1e-9)


def test_edge_cases():
    assert_close(flow_makespan([(2, 3)], [0]), 5.0, "flow_makespan([(2, 3)], [0])")
    assert_close(flow_makespan([(1,), (2,), (3,)], [2, 0, 1]), 6.0,
                 tr("flow_makespan(一个 stage)", "flow_makespan(one stage)"))
    assert_true(two_stage_order([(2, 2), (2, 2)]) in ([0, 1], [1, 0]),
                tr("two_stage_order(相同的两个) 要返回一个排列",
                   "two_stage_order(two equal ones) must return a permutation"))
    assert_equal(two_stage_order([]), [], "two_stage_order([])")
    for order in ([0], [0, 1, 2], [1, 1], [0, 2]):
        assert_raises(ValueError, flow_makespan, [(1, 1), (2, 2)], order, what=f"flow_makespan(..., {order})")
    assert_raises(ValueError, two_stage_order, [(1, 2, 3)], what="two_stage_order([(1, 2, 3)])")
