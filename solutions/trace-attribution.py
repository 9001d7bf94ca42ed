"""Exercise trace-attribution (chapter 8): a trace's idle split into schedule bubble, imbalance and overhead."""

from collections import defaultdict

from course.plan import Overlap, Plan
from course.replay import replay


def attribute_idle(plan, spans):
    """Per rank {"idle", "schedule", "imbalance", "overhead"} of a measured trace of ``plan`` (tokens per rank)."""
    ### BEGIN SOLUTION
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

    def rectangle_idle(rows_start, rows_end):
        first = min(r[0] for r in rows_start if r)
        last = max(r[-1] for r in rows_end if r)
        return [(last - first) - sum(e - s for s, e in zip(st, en)) for st, en in zip(rows_start, rows_end)]

    measured = rectangle_idle([[s for s, _ in row] for row in spans], [[e for _, e in row] for row in spans])
    forced_tl, balanced_tl = replay(plan, durations), replay(plan, nominal)
    forced = rectangle_idle(forced_tl.starts, forced_tl.ends)
    balanced = rectangle_idle(balanced_tl.starts, balanced_tl.ends)
    return [{"idle": measured[r], "schedule": balanced[r], "imbalance": forced[r] - balanced[r],
             "overhead": measured[r] - forced[r]} for r in range(plan.p)]
    ### END SOLUTION
