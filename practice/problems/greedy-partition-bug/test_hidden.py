import math
import random

from course.checks import CheckFailed, assert_close, assert_not_using, assert_raises, assert_true, fresh_seed, show
from course.costs import Costs
from course.i18n import tr
from course.partition import partition
from course.schedules import build
from course.sim import simulate

from submission import empty_stage_case, fixed_partition, slow_step_case

# Chapter 7's illustrative model: an embedding, alternating dense and MoE layers, an lm_head (cell "layers").
CHAPTER = [0.6] + [1.0, 1.8] * 7 + [2.5]


def checked_case(case, what):
    ok = (type(case) in (tuple, list) and len(case) == 2 and type(case[0]) in (list, tuple) and type(case[1]) is int
          and 2 <= case[1] <= len(case[0]) <= 64
          and all(type(t) in (int, float) and 0 < t < math.inf for t in case[0]))
    if not ok:
        raise CheckFailed(tr(f"{what} 要返回 (layer_times, p)：正的有限层耗时，2 <= p <= len(layer_times) <= 64",
                             f"{what} must return (layer_times, p): positive finite layer times, "
                             "2 <= p <= len(layer_times) <= 64"))
    return [float(t) for t in case[0]], case[1]


def one_f_one_b(stage_costs, p):
    return simulate(build("1f1b", p, 2 * p), Costs(f=stage_costs, b=stage_costs, w=stage_costs)).makespan


def bottleneck(layers, p, comm, stages, what):
    """The slowest stage of the learner's cut, after checking it is p non-empty contiguous stages in order."""
    n = len(layers)
    ok = (type(stages) is list and len(stages) == p and all(type(s) is list and s for s in stages)
          and all(type(i) is int for s in stages for i in s) and [i for s in stages for i in s] == list(range(n)))
    if not ok:
        raise CheckFailed(tr(f"{what} 要返回恰好 {p} 个非空的层号列表，按顺序覆盖 0..{n - 1}，得到 {show(stages)}",
                             f"{what} must return exactly {p} non-empty lists of layer indices covering 0..{n - 1} "
                             f"in order, got {show(stages)}"))
    cut = [comm] * (n - 1) if type(comm) in (int, float) else comm
    return max(sum(layers[i] for i in s) + (cut[s[0] - 1] if s[0] > 0 else 0.0) + (cut[s[-1]] if s[-1] < n - 1 else 0.0)
               for s in stages)


def check_fixed(layers, p, comm, what):
    got = bottleneck(layers, p, comm, fixed_partition(layers, p, comm), what)
    assert_close(got, partition(layers, p, comm=comm).bottleneck, tr(f"{what} 的瓶颈", f"bottleneck of {what}"),
                 tr("每一刀的通信两边都要付；试试动态规划", "both stages beside a cut pay its communication; "
                    "try dynamic programming"))


def test_the_seed_fills_every_stage_and_is_still_slow():
    layers, p = checked_case(slow_step_case(), "slow_step_case()")
    seed = partition(layers, p, "greedy")
    assert_true(0 not in seed.sizes,
                tr(f"slow_step_case() 上种子的贪心留下了空 stage (sizes {seed.sizes})：这里要它用满 p 个 stage",
                   f"on slow_step_case() the seed's greedy leaves a stage empty (sizes {seed.sizes}); this case "
                   "needs it to use all p stages"))
    ratio = one_f_one_b(seed.stage_costs, p) / one_f_one_b(partition(layers, p).stage_costs, p)
    assert_true(ratio >= 1.25,
                tr(f"slow_step_case() 上种子的切分只慢了 {ratio:.3f} 倍，要至少 1.25 倍",
                   f"on slow_step_case() the seed's cut is only {ratio:.3f} times slower; it must be at least 1.25")
                + tr("\n  提示 (hint): 种子只在累加和超过目标之后才切；切点该落的地方放一个重层会怎样？",
                     "\n  hint: the seed only cuts after the running sum passes the target; what if a heavy layer "
                     "sits where the cut belongs?"))


def test_fixed_partition_is_optimal_without_communication():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.randint(1, 12)
        layers = [rng.choice([0, 0.5, 1, 1, 2, 3, 5, 8, 12]) for _ in range(n)]
        p = rng.randint(1, n)
        check_fixed(layers, p, 0.0, f"fixed_partition({layers}, {p}) (seed={seed})")


def test_fixed_partition_counts_communication():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.randint(2, 12)
        layers = [rng.choice([0.5, 1, 2, 3, 5, 8]) for _ in range(n)]
        comm = rng.choice([rng.uniform(0.1, 3), [round(rng.uniform(0, 4), 2) for _ in range(n - 1)]])
        p = rng.randint(1, n)
        check_fixed(layers, p, comm, f"fixed_partition({layers}, {p}, comm={comm}) (seed={seed})")


def test_fixed_partition_on_the_seeds_failures():
    for case, what in ((empty_stage_case(), "empty_stage_case()"), (slow_step_case(), "slow_step_case()")):
        layers, p = checked_case(case, what)
        check_fixed(layers, p, 0.0, f"fixed_partition(*{what})")
    for lm_head in (2.5, 5.0):      # chapter 7's model; at 5.0 the seed leaves the last stage empty
        layers = CHAPTER[:-1] + [lm_head]
        check_fixed(layers, 4, 0.0, tr(f"fixed_partition(第 7 章的模型, lm_head={lm_head}, p=4)",
                                       f"fixed_partition(chapter 7's model, lm_head={lm_head}, p=4)"))
        check_fixed(layers, 4, 0.5, tr(f"fixed_partition(第 7 章的模型, lm_head={lm_head}, p=4, comm=0.5)",
                                       f"fixed_partition(chapter 7's model, lm_head={lm_head}, p=4, comm=0.5)"))


def test_fixed_partition_of_a_large_model():
    seed = fresh_seed()
    rng = random.Random(seed)
    layers = [9.0] + [rng.choice([2, 3, 3, 4, 11]) for _ in range(240)] + [14.0]   # embedding ... lm_head
    comm = [round(rng.uniform(0.5, 2), 2) for _ in range(len(layers) - 1)]
    check_fixed(layers, 8, comm, f"fixed_partition(242 layers, p=8, comm=...) (seed={seed})")
    assert_not_using(fixed_partition, "course")


def test_bad_arguments():
    for args in [([], 1), ([1, 2], 0), ([1, 2], 3), ([1, 2], True), ([1, 2], 1.0), ([1, -2], 1),
                 ([1, float("nan")], 1), ([1, 2, 3], 2, -1.0), ([1, 2, 3], 2, [1.0]), ([1, 2, 3], 2, [1.0, -1.0])]:
        assert_raises(ValueError, fixed_partition, *args, what=f"fixed_partition{show(args)}")
