"""Event-driven simulation of a Plan under Costs.

Each rank runs its steps in order, each as soon as the rank is free and the step's inputs have arrived
(producer end + ``comm`` when the producer sits on another rank).  Time advances by completion events from a
priority queue; durations are floats.  Every step starts at most once, so a run ends after at most one event per
step: a plan that cannot finish is reported as a deadlock naming what each stuck rank waits for.

This module must not import torch: the CLI and the notebooks import it on every start.
"""

from __future__ import annotations

import heapq

from .costs import Costs
from .plan import Op, Plan, PlanError, ops_of
from .timeline import Span, Timeline


class DeadlockError(PlanError):
    """The plan's order makes ranks wait on each other forever.  ``waits`` maps rank -> (step, missing op)."""

    def __init__(self, message: str, waits: dict[int, tuple[str, str]]):
        super().__init__(message)
        self.waits = waits


def simulate(plan: Plan, costs: Costs | None = None, *, validate: bool = True) -> Timeline:
    """Simulate ``plan``; return its Timeline.  Raises PlanError for a malformed plan, DeadlockError when stuck."""
    costs = costs or Costs()
    if validate:
        plan.validate()
    table = costs.stage_tables(plan)
    rank_of = plan.rank_of_stage()
    m, S = plan.m, plan.num_stages
    kind_index = {"F": 0, "B": 1, "W": 2}

    def key(op: Op) -> int:
        return (op.mb * S + op.stage) * 3 + kind_index[op.kind]

    # Compile each rank's steps into (duration, [(dep key, latency)], [produced keys]).
    compiled = []
    for r, steps in enumerate(plan.ranks):
        rows = []
        for step in steps:
            ops = ops_of(step)
            dur = sum(table[op.kind][op.stage] * costs.scale(op.mb) for op in ops)
            if len(ops) > 1:
                dur *= costs.overlap
            deps = [(key(d), costs.comm if rank_of[d.stage] != r else 0.0)
                    for op in ops for d in plan.dependencies(op)]
            rows.append((dur, deps, [key(op) for op in ops]))
        compiled.append(rows)

    done: list[float | None] = [None] * (m * S * 3)
    waiting: dict[int, list[int]] = {}
    pos = [0] * plan.p
    free = [0.0] * plan.p
    spans: list[list[Span]] = [[] for _ in range(plan.p)]
    events: list[tuple[float, int, int]] = []
    seq = 0

    def try_start(r: int) -> None:
        nonlocal seq
        dur, deps, _ = compiled[r][pos[r]]
        start = free[r]
        for k, lat in deps:
            t = done[k]
            if t is None:
                waiting.setdefault(k, []).append(r)
                return
            t += lat
            if t > start:
                start = t
        end = start + dur
        spans[r].append(Span(r, start, end, plan.ranks[r][pos[r]]))
        seq += 1
        heapq.heappush(events, (end, seq, r))

    for r in range(plan.p):
        if compiled[r]:
            try_start(r)
    while events:
        end, _, r = heapq.heappop(events)
        free[r] = end
        for k in compiled[r][pos[r]][2]:
            done[k] = end
            for w in waiting.pop(k, ()):
                try_start(w)
        pos[r] += 1
        if pos[r] < len(compiled[r]):
            try_start(r)

    if any(pos[r] < len(compiled[r]) for r in range(plan.p)):
        raise _deadlock(plan, pos, done, key)
    return Timeline.from_spans(plan, spans, table["act"])


def _deadlock(plan: Plan, pos: list[int], done: list, key) -> DeadlockError:
    where = {op: (r, i) for r, steps in enumerate(plan.ranks) for i, st in enumerate(steps) for op in ops_of(st)}
    waits, parts = {}, []
    for r, steps in enumerate(plan.ranks):
        if pos[r] == len(steps):
            continue
        step = steps[pos[r]]
        missing = next(d for op in ops_of(step) for d in plan.dependencies(op) if done[key(d)] is None)
        waits[r] = (str(step), str(missing))
        if missing not in where:
            held = "no rank runs it"
        else:
            owner, at = where[missing]
            held = f"rank {owner}'s step {at}" if owner != r else f"its own later step {at}"
        parts.append(f"rank {r} waits at {step} (step {pos[r]}) for {missing} ({held})")
    done_steps = sum(pos)
    total = sum(len(s) for s in plan.ranks)
    return DeadlockError(f"deadlock after {done_steps}/{total} steps: " + "; ".join(parts), waits)
