"""Chapter 8's printed method as an answer to trace-attribution: it must fail.

Transcribes chapter 8 §2, cells ``replay-method`` (replay with the measured durations; replay with every step at
its kind's mean) and the ``show_attribution`` code cell (schedule, imbalance, overhead in the iteration's
rectangle), as a learner would paste it: the chapter has no split of the imbalance, so all of it goes to
``stage`` and none to ``microbatch``.
"""

from collections import defaultdict

from course.plan import Overlap, Plan
from course.replay import replay


def attribute_idle(plan, spans):
    plan = Plan.parse("\n".join(" ".join(row) for row in plan))
    if len(spans) != plan.p or any(len(s) != len(steps) for s, steps in zip(spans, plan.ranks)):
        raise ValueError("spans must give one (start, end) per step of each rank")
    durations = [[end - start for start, end in row] for row in spans]

    def kind(step):
        return "&".join(op.kind for op in step.ops) if isinstance(step, Overlap) else step.kind

    total, count = defaultdict(float), defaultdict(int)
    for steps, durs in zip(plan.ranks, durations):
        for step, d in zip(steps, durs):
            total[kind(step)] += d
            count[kind(step)] += 1
    nominal = [[total[kind(s)] / count[kind(s)] for s in steps] for steps in plan.ranks]

    def idle(starts, ends):
        first = min(row[0] for row in starts if row)
        last = max(row[-1] for row in ends if row)
        return [(last - first) - sum(e - s for s, e in zip(st, en)) for st, en in zip(starts, ends)]

    measured = idle([[s for s, _ in row] for row in spans], [[e for _, e in row] for row in spans])
    forced_tl, balanced_tl = replay(plan, durations), replay(plan, nominal)
    forced, balanced = idle(forced_tl.starts, forced_tl.ends), idle(balanced_tl.starts, balanced_tl.ends)
    return [{"idle": measured[r], "schedule": balanced[r], "stage": forced[r] - balanced[r], "microbatch": 0.0,
             "overhead": measured[r] - forced[r]} for r in range(plan.p)]
