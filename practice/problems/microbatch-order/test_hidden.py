import itertools
import random

from course.checks import assert_close, assert_equal, assert_not_using, assert_raises, assert_true, fresh_seed

from submission import flow_makespan, johnson_order


def makespan(times, order):
    """Completion times by the flow-shop recurrence C[k][s] = max(C[k-1][s], C[k][s-1]) + t."""
    done = [0.0] * len(times[0])
    for i in order:
        for s, t in enumerate(times[i]):
            done[s] = max(done[s], done[s - 1] if s else 0.0) + t
    return done[-1]


def test_flow_makespan_random():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(80):
        n, stages = rng.randint(1, 8), rng.randint(1, 6)
        times = [tuple(rng.choice([0.5, 1, 2, 3, 7]) for _ in range(stages)) for _ in range(n)]
        order = rng.sample(range(n), n)
        assert_close(flow_makespan(times, order), makespan(times, order), f"flow_makespan({times}, {order}) (seed={seed})")


def test_johnson_is_optimal():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(40):
        n = rng.randint(1, 7)
        times = [(rng.randint(1, 9), rng.randint(1, 9)) for _ in range(n)]
        order = johnson_order(times)
        assert_true(type(order) is list and sorted(order) == list(range(n)) and all(type(i) is int for i in order),
                    f"johnson_order({times}) 要返回 0..{n - 1} 的一个排列 (list of int)")
        best = min(makespan(times, list(o)) for o in itertools.permutations(range(n)))
        assert_close(makespan(times, order), best, f"johnson_order({times}) 的 makespan (seed={seed})",
                     "交换相邻的两个 micro-batch 什么时候不会变坏？（S. M. Johnson, 1954）")
    assert_not_using(johnson_order, "course")
    assert_not_using(flow_makespan, "course")


def test_heaviest_first_is_not_always_optimal():
    times = [(1, 6), (6, 1), (3, 3)]   # heaviest first (0, 1, 2: weights 7, 7, 6) takes 13
    assert_close(makespan(times, johnson_order(times)), 11.0, f"johnson_order({times}) 的 makespan")
    assert_close(flow_makespan(times, [0, 1, 2]), 13.0, "最重的先做的 makespan")


def test_many_microbatches():
    seed = fresh_seed()
    rng = random.Random(seed)
    n = 20000
    times = [(rng.uniform(0.1, 10), rng.uniform(0.1, 10)) for _ in range(n)]
    order = johnson_order(times)
    assert_true(type(order) is list and len(order) == n and sorted(order) == list(range(n)),
                f"johnson_order(n={n}) 要返回 0..{n - 1} 的一个排列")
    first = sorted((i for i in range(n) if times[i][0] <= times[i][1]), key=lambda i: times[i][0])
    last = sorted((i for i in range(n) if times[i][0] > times[i][1]), key=lambda i: -times[i][1])
    assert_close(makespan(times, order), makespan(times, first + last), f"johnson_order(n={n}) 的 makespan "
                 f"(seed={seed})", "和最优的 makespan 比；穷举太慢", rel=1e-9)


def test_edge_cases():
    assert_close(flow_makespan([(2, 3)], [0]), 5.0, "flow_makespan([(2, 3)], [0])")
    assert_close(flow_makespan([(1,), (2,), (3,)], [2, 0, 1]), 6.0, "flow_makespan(一个 stage)")
    assert_true(johnson_order([(2, 2), (2, 2)]) in ([0, 1], [1, 0]), "johnson_order(相同的两个) 要返回一个排列")
    assert_equal(johnson_order([]), [], "johnson_order([])")
    for order in ([0], [0, 1, 2], [1, 1], [0, 2]):
        assert_raises(ValueError, flow_makespan, [(1, 1), (2, 2)], order, what=f"flow_makespan(..., {order})")
    assert_raises(ValueError, johnson_order, [(1, 2, 3)], what="johnson_order([(1, 2, 3)])")
