"""Several optimizer steps back to back: with a barrier between them, or without one (post-validation).

- ``sync=True``: every rank waits for the whole pipeline to finish iteration k (gradient all-reduce, optimizer
  step, a global norm or NaN check) before starting k+1.  Iterations are then identical copies, one makespan apart.
- ``sync=False``: a stage updates its parameters as soon as its own W's (or backwards) of iteration k are done and
  starts iteration k+1 right after; global checks are validated afterwards and rolled back if they fail
  (the zero-bubble paper's post-validation).  That is exactly each rank's ops of the K iterations concatenated,
  micro-batch i of iteration k renamed k*m + i: the next iteration's F on a stage waits only for that rank's
  own previous work and for its input.

The steady-state ``period`` is the distance between the ends of the last two iterations.  ZB-H2 shows why it
matters: one iteration takes m(F+B+W) + (p-1)F, but without a barrier the next iteration's warm-up fills the
previous one's tail, and the period falls to m(F+B+W), a pipeline with no bubble at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .costs import Costs
from .plan import Op, Overlap, Plan, Step, ops_of
from .sim_compiled import CompiledPlan
from .timeline import Timeline
from .validation import check_counts


@dataclass
class Iterations:
    """K iterations simulated together."""

    timeline: Timeline          # all K iterations; micro-batch k*m + i is micro-batch i of iteration k
    makespans: list[float]      # per iteration: its first start to its last end
    ends: list[float]           # per iteration: the time its last op ends
    sync: bool

    @property
    def iterations(self) -> int:
        return len(self.makespans)

    @property
    def period(self) -> float:
        """Steady-state time per iteration: the gap between the last two iterations' ends (one makespan if K=1)."""
        return self.ends[-1] - self.ends[-2] if len(self.ends) > 1 else self.makespans[0]

    def summary(self) -> dict:
        return {"iterations": self.iterations, "sync": self.sync, "period": self.period,
                "makespans": self.makespans, "total": self.timeline.makespan}


def repeat_plan(plan: Plan, iterations: int) -> Plan:
    """One plan running ``iterations`` copies of ``plan`` on each rank in turn, micro-batches renumbered."""
    m = plan.m
    ranks = [[_renumber(st, k * m) for k in range(iterations) for st in steps] for steps in plan.ranks]
    return Plan(ranks, m * iterations, plan.placement, plan.routes * iterations, plan.name)


def simulate_iterations(plan: Plan, costs: Costs | None = None, iterations: int = 2, sync: bool = True) -> Iterations:
    """Simulate ``iterations`` optimizer steps of ``plan``; with ``sync`` a barrier separates them.

    K iterations hold K times the ops, so this runs the compiled simulator (course.sim_compiled: the same rule
    as course.sim.simulate, laid out for speed)."""
    check_counts(iterations=iterations)
    costs = costs or Costs()
    if iterations == 1 or sync:
        one = CompiledPlan(plan).simulate(costs)
        if iterations == 1:
            return Iterations(one, [one.makespan], [one.end], sync)
        # Behind a barrier every iteration starts from an idle pipeline: the same timeline, shifted.
        timeline = _stack(plan, one, iterations)
    else:
        if costs.mb_scale is not None:
            costs = replace(costs, mb_scale=list(costs.mb_scale) * iterations)
        timeline = CompiledPlan(repeat_plan(plan, iterations)).simulate(costs)
    starts = [float("inf")] * iterations
    ends = [float("-inf")] * iterations
    m = plan.m
    for r in range(timeline.p):
        for start, end, step in zip(timeline.starts[r], timeline.ends[r], timeline.steps[r]):
            k = ops_of(step)[0].mb // m
            starts[k] = min(starts[k], start)
            ends[k] = max(ends[k], end)
    return Iterations(timeline, [e - s for s, e in zip(starts, ends)], ends, sync)


def _stack(plan: Plan, one: Timeline, iterations: int) -> Timeline:
    m, length = plan.m, one.makespan
    origin = one.start
    starts, ends, steps = [], [], []
    for r in range(one.p):
        starts.append([s - origin + k * length for k in range(iterations) for s in one.starts[r]])
        ends.append([e - origin + k * length for k in range(iterations) for e in one.ends[r]])
        steps.append([_renumber(st, k * m) for k in range(iterations) for st in one.steps[r]])
    return one.replace(starts=starts, ends=ends, steps=steps)


def _renumber(step: Step, offset: int) -> Step:
    """The same step on micro-batch index + offset."""
    moved = [Op(op.kind, op.mb + offset, op.stage) for op in ops_of(step)]
    return Overlap(*moved) if isinstance(step, Overlap) else moved[0]
