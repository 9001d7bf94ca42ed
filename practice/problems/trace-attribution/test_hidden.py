import random
from collections import defaultdict

from course.attribution import attribute, rectangle_idle
from course.checks import CheckFailed, assert_close, assert_not_using, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.plan import Overlap, ops_of
from course.replay import durations_of, replay
from course.schedules import build
from course.sim import simulate

from submission import attribute_idle

KEYS = ("idle", "schedule", "stage", "microbatch", "overhead")
SCHEDULES = [("1f1b", None), ("zb-h1", None), ("zb-h2", None), ("interleaved", 2), ("zbv", None)]


def trace(rng, name, p, m, v=None, stage_costs=True, mb_costs=True, noise=True, comm=None):
    """A measured-looking timeline of a plan: per-stage and per-micro-batch costs, per-op noise, latency."""
    plan = build(name, p, m, v=v) if v else build(name, p, m)
    stages = plan.chunks if plan.chunks > 1 else p
    f = [rng.uniform(0.5, 2) for _ in range(stages)] if stage_costs else 1.0
    costs = Costs(f=f, b=rng.uniform(0.5, 2), w=rng.uniform(0.2, 1),
                  mb_scale=[rng.uniform(0.5, 1.5) for _ in range(m)] if mb_costs else None)
    durations = durations_of(simulate(plan, costs))
    if noise:
        durations = [[d * rng.uniform(0.8, 1.3) for d in row] for row in durations]
    return plan, replay(plan, durations, comm=rng.choice([0.0, 0.05, 0.3]) if comm is None else comm)


def reference(plan, measured):
    """The split the statement defines: replays at the kind's mean, at the (kind, stage) mean, as measured."""
    durations = durations_of(measured)

    def kind(step):
        return "&".join(op.kind for op in step.ops) if isinstance(step, Overlap) else step.kind

    def mean_by(key):
        total, count = defaultdict(float), defaultdict(int)
        for steps, durs in zip(plan.ranks, durations):
            for step, d in zip(steps, durs):
                total[key(step)] += d
                count[key(step)] += 1
        return [[total[key(s)] / count[key(s)] for s in steps] for steps in plan.ranks]

    by_kind = rectangle_idle(replay(plan, mean_by(kind)))
    by_stage = rectangle_idle(replay(plan, mean_by(lambda st: (kind(st), tuple(op.stage for op in ops_of(st))))))
    forced, idle = rectangle_idle(replay(plan, durations)), rectangle_idle(measured)
    return [{"idle": idle[r], "schedule": by_kind[r], "stage": by_stage[r] - by_kind[r],
             "microbatch": forced[r] - by_stage[r], "overhead": idle[r] - forced[r]} for r in range(plan.p)]


def attribution_of(plan, measured, what):
    tokens = [plan.rank_tokens(r) for r in range(plan.p)]
    spans = [[(float(s), float(e)) for s, e in zip(measured.starts[r], measured.ends[r])] for r in range(plan.p)]
    got = attribute_idle(tokens, spans)
    if type(got) is not list or len(got) != plan.p or not all(type(x) is dict for x in got):
        raise CheckFailed(tr(f"{what}：要返回每个 rank 一个 dict", f"{what}: return one dict per rank"))
    for r, row in enumerate(got):
        missing = [k for k in KEYS if k not in row]
        if missing:
            raise CheckFailed(tr(f"{what}：rank {r} 的 dict 缺少 {missing}",
                                 f"{what}: rank {r}'s dict lacks {missing}"))
    return got


HINTS = {
    "idle": ("makespan 减去这个 rank 忙的时间", "the makespan minus this rank's busy time"),
    "schedule": ("每个步骤都取同一种步骤的平均时长、不加延迟重放",
                 "replay with every step at its kind's mean, no latency"),
    "stage": ("假如每个 stage 上的 micro-batch 一样重，stage 之间的差别会多出多少空闲？",
              "how much idle would the stages' differences add if every micro-batch were alike on each stage?"),
    "microbatch": ("不均衡里剩下的部分：micro-batch 之间的差别",
                   "the rest of the imbalance: the micro-batches' differences"),
    "overhead": ("trace 的空闲减去用实测时长重放的空闲",
                 "the trace's idle minus that of the replay at measured lengths"),
}


def test_against_the_reference_on_random_traces():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(14):
        name, v = rng.choice(SCHEDULES)
        p = rng.randint(2, 5)
        m = p * rng.randint(1, 3)
        plan, measured = trace(rng, name, p, m, v)
        what = f"{name} p={p} m={m} (seed={seed})"
        got, want, chapter = attribution_of(plan, measured, what), reference(plan, measured), attribute(plan, measured)
        for r in range(p):
            for key in KEYS:
                assert_close(got[r][key], want[r][key], tr(f"{what}：rank {r} 的 {key}", f"{what}: rank {r}'s {key}"),
                             tr(*HINTS[key]), rel=1e-7, abs_tol=1e-9)
            assert_close(got[r]["stage"] + got[r]["microbatch"], chapter[r].imbalance,
                         tr(f"{what}：rank {r} 的 stage + microbatch", f"{what}: rank {r}'s stage + microbatch"),
                         tr("两者合起来就是第 8 章的 imbalance", "together they are chapter 8's imbalance"),
                         rel=1e-7, abs_tol=1e-9)
            assert_close(sum(got[r][k] for k in KEYS[1:]), got[r]["idle"],
                         tr(f"{what}：rank {r} 的四部分之和", f"{what}: the sum of rank {r}'s four parts"),
                         rel=1e-9, abs_tol=1e-9)
    assert_not_using(attribute_idle, "course.attribution")


def part_is_zero(key, hint, **alike):
    """On traces where one source of imbalance is switched off, its part is 0 on every rank (every schedule)."""
    seed = fresh_seed()
    rng = random.Random(seed)
    for name, v in SCHEDULES:
        p = rng.randint(2, 4)
        plan, measured = trace(rng, name, p, 2 * p, v, noise=False, **alike)
        what = f"{name} p={p} m={2 * p} (seed={seed})"
        got = attribution_of(plan, measured, what)
        for r in range(p):
            assert_close(got[r][key], 0.0, tr(f"{what}：rank {r} 的 {key}", f"{what}: rank {r}'s {key}"), tr(*hint),
                         rel=1e-7, abs_tol=1e-9)


def test_micro_batches_alike_on_each_stage_leave_no_microbatch_part():
    part_is_zero("microbatch", ("每个 stage 上的 micro-batch 都一样重（stage 之间不同）：不均衡全是 stage 的",
                                "every micro-batch is alike on each stage (the stages differ): all imbalance is the "
                                "stages'"),
                 mb_costs=False, comm=0.3)


def test_stages_alike_leave_no_stage_part():
    part_is_zero("stage", ("每个 stage 一样快，只有 micro-batch 轻重不同：不均衡全是 micro-batch 的",
                           "every stage is as fast as the next, only the micro-batches differ: "
                           "all imbalance is theirs"),
                 stage_costs=False)
