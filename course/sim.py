"""Event-driven simulation of a Plan under Costs: the rule every chapter's timeline follows.

The rule: each rank runs its steps in order; a step starts as soon as its rank is free and every input it
needs has arrived (an input made on another rank arrives ``costs.comm`` after the op that makes it ends).
How long a step lasts is ``Costs.step_duration``.  Durations are floats: time jumps from event to event,
there are no ticks.

The algorithm: a queue of completion events ``(time, rank)``, earliest first, says "rank's running step ends
at time".  A rank tries to start its next step; if an input has not been computed yet, the rank parks on
that op and waits.  Popping an event records the step's end, wakes the ranks parked on its ops and lets its
own rank try its next step.  So there is exactly one event per step.  When the queue runs dry with steps
left, the ranks still parked wait on each other: a deadlock, reported with what each one waits for.

``course.sim_compiled.CompiledPlan`` runs the same rule over flat columns, for the places that simulate one
plan many times (ordering search, sweeps, benchmarks); tests/test_sim.py holds the two to identical results.
This module imports the standard library only (and must never import torch or numpy).
"""

from __future__ import annotations

import heapq

from .costs import Costs
from .plan import Op, Plan, PlanError, ops_of
from .timeline import Timeline


class DeadlockError(PlanError):
    """The plan's order makes ranks wait on each other forever.  ``waits`` maps rank -> (step, missing op)."""

    def __init__(self, message: str, waits: dict[int, tuple[str, str]]):
        super().__init__(message)
        self.waits = waits


def simulate(plan: Plan, costs: Costs | None = None, trace: list | None = None,
             durations: list[list[float]] | None = None) -> Timeline:
    """Simulate ``plan``; return its Timeline.  Raises PlanError for a malformed plan, DeadlockError when stuck.

    ``trace``: a list to which each completion event is appended as (time, rank, step), in the order the
    simulation processes them (chapter 2 counts them).  ``durations``: one duration per step of each rank in
    place of ``costs.durations(plan)`` (measured ones, or a transformed cost model: ``course.replay``)."""
    costs = costs or Costs()
    plan.validate()
    if durations is not None and [len(d) for d in durations] != [len(s) for s in plan.ranks]:
        raise ValueError(f"durations must list one value per step of each rank: the plan has "
                         f"{[len(s) for s in plan.ranks]} steps, got {[len(d) for d in durations]}")
    duration = costs.durations(plan) if durations is None else durations   # duration[r][i]: rank r's step i
    rank_of = plan.rank_of_stage()
    P = plan.p
    pos = [0] * P                                # each rank's next step
    free = [0.0] * P                             # when each rank's last step ended
    starts: list[list[float]] = [[] for _ in range(P)]
    ends: list[list[float]] = [[] for _ in range(P)]
    done: dict[Op, float] = {}                   # op -> when it ended
    parked: dict[Op, list[int]] = {}             # op not computed yet -> the ranks waiting for it
    events: list[tuple[float, int]] = []         # (time, rank): the step rank is running ends at time

    def try_start(r: int) -> None:
        """Start rank r's next step if every input has arrived; otherwise park r on the first missing one."""
        if pos[r] == len(plan.ranks[r]):
            return
        start = free[r]
        for op in ops_of(plan.ranks[r][pos[r]]):
            for need in plan.dependencies(op):
                if need not in done:
                    parked.setdefault(need, []).append(r)
                    return
                arrival = done[need] + (costs.comm if rank_of[need.stage] != r else 0.0)
                start = max(start, arrival)
        starts[r].append(start)
        ends[r].append(start + duration[r][pos[r]])
        heapq.heappush(events, (ends[r][-1], r))

    for r in range(P):
        try_start(r)
    while events:
        t, r = heapq.heappop(events)
        step = plan.ranks[r][pos[r]]
        if trace is not None:
            trace.append((t, r, step))
        pos[r], free[r] = pos[r] + 1, t
        for op in ops_of(step):
            done[op] = t
            for waiter in parked.pop(op, ()):
                try_start(waiter)
        try_start(r)
    if sum(pos) < sum(map(len, plan.ranks)):
        raise deadlock_report(plan, pos, done)
    return Timeline.of(plan, costs, starts, ends)


def deadlock_report(plan: Plan, pos: list[int], done) -> DeadlockError:
    """Name, for each rank that did not finish, the step it is stuck at and the first input it waits for."""
    where = {op: (r, i) for r, steps in enumerate(plan.ranks) for i, st in enumerate(steps) for op in ops_of(st)}
    waits, parts = {}, []
    for r, steps in enumerate(plan.ranks):
        if pos[r] == len(steps):
            continue
        step = steps[pos[r]]
        missing = next(d for op in ops_of(step) for d in plan.dependencies(op) if d not in done)
        waits[r] = (str(step), str(missing))
        owner, at = where[missing]
        held = (f"rank {owner}'s step {at}" if owner != r else f"its own later step {at}" if at != pos[r]
                else "the other op of this pair")
        parts.append(f"rank {r} waits at {step} (step {pos[r]}) for {missing} ({held})")
    total = sum(map(len, plan.ranks))
    return DeadlockError(f"deadlock after {sum(pos)}/{total} steps: " + "; ".join(parts), waits)
