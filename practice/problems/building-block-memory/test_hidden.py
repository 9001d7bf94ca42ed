import random

from course.checks import assert_not_using, assert_raises, assert_true, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Op, Plan
from course.sim import simulate

from submission import steady_peaks


def placement_of(shape, p, v):
    """One stage per rank, the V shape (rank r holds r and 2p-1-r), or interleaved (rank r holds r, r+p, ...)."""
    if shape == "plain":
        return [[r] for r in range(p)]
    if shape == "v":
        return [[r, 2 * p - 1 - r] for r in range(p)]
    return [[r + k * p for k in range(v)] for r in range(p)]


def random_block(rng, placement, period):
    """One micro-batch's ops along its path with random offsets; an op whose slot modulo ``period`` its rank
    already uses moves one slot later until it is free, so copies never collide."""
    rank_of = {s: r for r, held in enumerate(placement) for s in held}
    stages = len(rank_of)
    used = [set() for _ in placement]
    slot = {}

    def place(kind, s, t):
        while t % period in used[rank_of[s]]:
            t += 1
        used[rank_of[s]].add(t % period)
        slot[kind, s] = t
        return t

    t = place("F", 0, rng.randint(0, 2))
    for s in range(1, stages):
        t = place("F", s, t + rng.randint(1, 3))
    t = place("B", stages - 1, t + rng.randint(1, 3))
    for s in range(stages - 2, -1, -1):
        t = place("B", s, t + rng.randint(1, 3))
    for s in rng.sample(range(stages), stages):          # W's in a random order: they compete for free slots
        place("W", s, slot["B", s] + 1 + rng.randint(0, 4))
    return slot


def simulated(block, period, placement, act, w_mem):
    """The block repeated often enough for a full steady state, simulated; each rank's peak."""
    m = max(block.values()) // period + 3
    rank_of = {s: r for r, held in enumerate(placement) for s in held}
    timed = [[] for _ in placement]
    for i in range(m):
        for (kind, s), t in block.items():
            timed[rank_of[s]].append((t + i * period, Op(kind, i, s)))
    plan = Plan([[op for _, op in sorted(ops)] for ops in timed], m, placement=placement)
    return simulate(plan, Costs(act=list(act), w_mem=w_mem)).peak_activations


def check(block, period, placement, act, w_mem, what):
    got = steady_peaks(block, period, placement, act, w_mem)
    assert_true(type(got) is list and len(got) == len(placement)
                and all(type(x) in (int, float) for x in got),
                tr(f"{what}: 要返回 {len(placement)} 个数的列表", f"{what}: return a list of {len(placement)} numbers"))
    want = simulated(block, period, placement, act, w_mem)
    scale = max(act)
    for r, (g, e) in enumerate(zip(got, want)):
        assert_true(abs(g - e) <= 1e-9 * scale,
                    tr(f"{what}: rank {r} 的峰值是 {g:.6g}，模拟器给出 {e:.6g}",
                       f"{what}: rank {r}'s peak is {g:.6g}, the simulator gives {e:.6g}"))


def test_v_shape_blocks():
    # the V placement of chapter 5 section 6 (period 6, one unit per chunk), with W holding all, some or none of it
    rng = random.Random(1)
    for p, w_mem in ((4, 1.0), (4, 0.3), (3, 0.0)):
        placement = placement_of("v", p, 2)
        block = random_block(rng, placement, 6)
        check(block, 6, placement, [1.0] * (2 * p), w_mem, f"V p={p} w_mem={w_mem}")


def test_random_blocks():
    seed = fresh_seed()
    rng = random.Random(seed)
    for case in range(30):
        shape = rng.choice(["plain", "v", "interleaved"])
        p, v = rng.randint(1, 5), rng.randint(2, 3)
        placement = placement_of(shape, p, v)
        per_rank = max(len(held) for held in placement)
        period = 3 * per_rank + rng.randint(0, 3)
        block = random_block(rng, placement, period)
        act = [rng.randint(1, 4) * 10 ** rng.randint(6, 9) for _ in range(sum(map(len, placement)))]
        w_mem = rng.choice([0.0, 0.25, 0.5, 1.0, round(rng.random(), 3)])
        check(block, period, placement, act, w_mem,
              f"case {case}: {shape} p={p} period={period} w_mem={w_mem} (seed={seed})")
    assert_not_using(steady_peaks, "course")


def test_bad_arguments():
    placement = [[0], [1]]
    block = {("F", 0): 0, ("F", 1): 1, ("B", 1): 2, ("W", 1): 3, ("B", 0): 4, ("W", 0): 5}
    act = [1.0, 1.0]
    missing = {k: v for k, v in block.items() if k != ("W", 0)}
    for args in [(block, 0, placement, act, 1.0), (block, 2.5, placement, act, 1.0), (block, 3, placement, act, 1.5),
                 (block, 3, placement, act, -0.1), (missing, 3, placement, act, 1.0), (block, 3, [[0]], act, 1.0),
                 (block, 3, placement, [1.0], 1.0)]:
        assert_raises(ValueError, steady_peaks, *args, what=f"steady_peaks(period={args[1]!r}, w_mem={args[4]!r})")
