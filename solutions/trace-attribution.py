"""Exercise trace-attribution (chapter 8): a trace's idle time split into the schedule's bubble, the stages'
imbalance, the micro-batches' imbalance, and communication and overhead."""

from collections import defaultdict

from course.plan import Overlap, Plan, ops_of
from course.replay import replay


def attribute_idle(plan, spans):
    """Per rank {"idle", "schedule", "stage", "microbatch", "overhead"} of a measured trace of ``plan``.

    ``plan``: each rank's op tokens (what ``Plan.parse`` reads); ``spans[r]``: rank r's measured (start, end) of
    each step, in the plan's order.  Raises ValueError when the spans do not match the plan's steps.
    """
    ### BEGIN SOLUTION
    plan = Plan.parse("\n".join(" ".join(row) for row in plan))
    if len(spans) != plan.p or any(len(s) != len(steps) for s, steps in zip(spans, plan.ranks)):
        raise ValueError("spans must give one (start, end) per step of each rank")
    durations = [[end - start for start, end in row] for row in spans]

    def kind(step):
        return "&".join(op.kind for op in step.ops) if isinstance(step, Overlap) else step.kind

    def mean_by(key):
        """Every step at the mean measured duration of the steps that share its key."""
        total, count = defaultdict(float), defaultdict(int)
        for steps, durs in zip(plan.ranks, durations):
            for step, d in zip(steps, durs):
                total[key(step)] += d
                count[key(step)] += 1
        return [[total[key(s)] / count[key(s)] for s in steps] for steps in plan.ranks]

    def rectangle_idle(starts, ends):
        """Per rank: the iteration's makespan minus the rank's busy time."""
        first = min(row[0] for row in starts if row)
        last = max(row[-1] for row in ends if row)
        return [(last - first) - sum(e - s for s, e in zip(st, en)) for st, en in zip(starts, ends)]

    def replayed_idle(durs):
        tl = replay(plan, durs)
        return rectangle_idle(tl.starts, tl.ends)

    measured = rectangle_idle([[s for s, _ in row] for row in spans], [[e for _, e in row] for row in spans])
    # The stage level keeps what distinguishes stages (the kind and the stages it runs on) and averages away
    # what distinguishes micro-batches: a trace whose micro-batches cost the same on each stage replays as itself.
    by_kind = replayed_idle(mean_by(kind))
    by_stage = replayed_idle(mean_by(lambda st: (kind(st), tuple(op.stage for op in ops_of(st)))))
    forced = replayed_idle(durations)
    return [{"idle": measured[r], "schedule": by_kind[r], "stage": by_stage[r] - by_kind[r],
             "microbatch": forced[r] - by_stage[r], "overhead": measured[r] - forced[r]} for r in range(plan.p)]
    ### END SOLUTION
