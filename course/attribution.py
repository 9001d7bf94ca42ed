"""Where a trace's idle time comes from: schedule bubble, imbalance, communication and overhead.

Reading a measured timeline by its shape ("idle before the first op and after the last is the bubble, gaps
between ops are waiting on others") is wrong for 1F1B: in the ideal simulation rank 0 has no head and no tail,
its whole bubble sits between ops.  The reliable method replays the same plan twice:

1. with the **measured** duration of every step and no latency: the idle this leaves is what the schedule and
   the actual op lengths force; what the trace idles beyond it is **communication and overhead** (transfers,
   process scheduling, timer noise: nothing an op's own duration explains);
2. with **nominal** durations, every step lasting the mean measured duration of its kind (F, B, W, F&B): the
   idle of this balanced run is the **schedule bubble**; what the measured durations add to it is **imbalance**
   (a heavier stage, longer micro-batches).

Idle is counted in the iteration rectangle, makespan - busy per rank (the denominator of the bubble ratio), so
per rank ``schedule + imbalance + overhead == idle`` holds by construction, and the nominal run does the same
total work as the trace.  Per rank the imbalance can be negative: a rank slower than nominal idles less.

The replays use :func:`course.replay.replay`, the simulator's rule with one given duration per step.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .plan import Overlap, Plan
from .replay import durations_of, replay
from .timeline import Timeline


@dataclass(frozen=True)
class IdleShare:
    """One rank's idle time in the iteration rectangle, split by cause (same unit as the trace)."""

    rank: int
    idle: float          # measured makespan - busy
    schedule: float      # idle of the plan with every step at its kind's mean duration
    imbalance: float     # idle the measured durations add (may be negative on a rank slower than nominal)
    overhead: float      # idle the measured durations do not explain: communication, scheduling, noise

    def to_json(self) -> dict:
        return {"rank": self.rank, "idle": self.idle, "schedule": self.schedule, "imbalance": self.imbalance,
                "overhead": self.overhead}


def _kind(step) -> str:
    return "&".join(op.kind for op in step.ops) if isinstance(step, Overlap) else step.kind


def nominal_durations(plan: Plan, durations: list[list[float]]) -> list[list[float]]:
    """Every step at the mean of the given durations of its kind (F, B, W, F&B): the same total work, balanced."""
    total, count = defaultdict(float), defaultdict(int)
    for steps, durs in zip(plan.ranks, durations):
        for step, d in zip(steps, durs):
            total[_kind(step)] += d
            count[_kind(step)] += 1
    return [[total[_kind(s)] / count[_kind(s)] for s in steps] for steps in plan.ranks]


def rectangle_idle(timeline: Timeline) -> list[float]:
    """Per rank: makespan - busy (idle before the first op, between ops and after the last, all together)."""
    return [timeline.makespan - b for b in timeline.busy]


def attribute(plan: Plan, measured: Timeline) -> list[IdleShare]:
    """Split each rank's idle in ``measured`` (a trace of ``plan``, steps in the plan's order) by cause."""
    for r in range(plan.p):
        if list(measured.steps[r]) != list(plan.ranks[r]):
            raise ValueError(f"rank {r} of the trace ran {measured.ops(r)[:6]}..., not the plan's order "
                             f"{plan.rank_tokens(r)[:6]}...: attribute the plan the trace executed")
    durations = durations_of(measured)
    as_measured = replay(plan, durations)
    balanced = replay(plan, nominal_durations(plan, durations))
    idle, forced, nominal = rectangle_idle(measured), rectangle_idle(as_measured), rectangle_idle(balanced)
    return [IdleShare(r, idle[r], nominal[r], forced[r] - nominal[r], idle[r] - forced[r]) for r in range(plan.p)]


def window_idle(timeline: Timeline) -> list[dict]:
    """Per rank: idle before its first op (head), between its ops (gaps) and after its last op (tail)."""
    end = timeline.start + timeline.makespan
    return [{"rank": r, "busy": timeline.busy[r], "head": spans[0].start - timeline.start,
             "gaps": timeline.idle[r], "tail": end - spans[-1].end} if spans else
            {"rank": r, "busy": 0.0, "head": timeline.makespan, "gaps": 0.0, "tail": 0.0}
            for r, spans in enumerate(timeline.spans)]


__all__ = ["IdleShare", "attribute", "nominal_durations", "rectangle_idle", "window_idle"]
