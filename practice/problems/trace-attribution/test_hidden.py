import random

from course.attribution import attribute
from course.checks import CheckFailed, assert_close, assert_not_using, fresh_seed
from course.costs import Costs
from course.replay import durations_of, replay
from course.schedules import build
from course.sim import simulate

from submission import attribute_idle


def trace(rng, name, p, m, v=None):
    plan = build(name, p, m, v=v) if v else build(name, p, m)
    costs = Costs(f=[rng.uniform(0.5, 2) for _ in range(p)], b=rng.uniform(0.5, 2), w=rng.uniform(0.2, 1))
    ideal = durations_of(simulate(plan, costs))
    noisy = [[d * rng.uniform(0.8, 1.3) for d in row] for row in ideal]
    measured = replay(plan, noisy, comm=rng.choice([0.0, 0.05, 0.3]))
    return plan, measured


def test_against_the_course_attribution():
    seed = fresh_seed()
    rng = random.Random(seed)
    for case in range(16):
        name, v = rng.choice([("1f1b", None), ("zb-h1", None), ("zb-h2", None), ("interleaved", 2)])
        p = rng.randint(2, 5)
        m = p * rng.randint(1, 3)
        plan, measured = trace(rng, name, p, m, v)
        tokens = [plan.rank_tokens(r) for r in range(p)]
        spans = [[(float(s), float(e)) for s, e in zip(measured.starts[r], measured.ends[r])] for r in range(p)]
        got = attribute_idle(tokens, spans)
        want = attribute(plan, measured)
        what = f"{name} p={p} m={m} (seed={seed})"
        if type(got) is not list or len(got) != p or not all(type(x) is dict for x in got):
            raise CheckFailed(f"{what}: 要返回每个 rank 一个 dict")
        for r in range(p):
            for key in ("idle", "schedule", "imbalance", "overhead"):
                assert_close(got[r].get(key), getattr(want[r], key), f"{what}: rank {r} 的 {key}",
                             {"schedule": "每个步骤都用同一种步骤的平均时长、不加通信延迟重放",
                              "imbalance": "每个步骤用它自己的实测时长、不加通信延迟重放，再减去 schedule",
                              "overhead": "trace 的空闲减去用实测时长重放的空闲",
                              "idle": "makespan 减去这个 rank 忙的时间"}[key], rel=1e-7, abs_tol=1e-9)
            total = got[r]["schedule"] + got[r]["imbalance"] + got[r]["overhead"]
            assert_close(total, got[r]["idle"], f"{what}: rank {r} 的三部分之和", rel=1e-9, abs_tol=1e-9)
    assert_not_using(attribute_idle, "course.attribution")
