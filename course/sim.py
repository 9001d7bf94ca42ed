"""Event-driven simulation of a Plan under Costs.

Each rank runs its steps in order, each as soon as the rank is free and the step's inputs have arrived
(producer end + ``comm`` when the producer sits on another rank); durations are floats, there are no ticks.

Events are kept in a priority queue ordered by time: an event (t, r) says rank r may go on from time t.  The
rank popped runs its steps until one needs an input that is not computed yet; it then parks on that input, and
the step that computes it queues a new event for the rank.  Every step is computed once and each park needs a
new step to end it, so the loop ends after at most one event per step: a plan that cannot finish leaves ranks
parked, and is reported as a deadlock naming what each one waits for.

Plans reach 10^5 ops, so the loop works on integer keys, (mb * S + stage) * 3 + kind, and checks each op
cheaply as it runs; on any anomaly (a bad op, a duplicate, a missing op, a stall) it asks Plan.validate() for the
precise message first, so a malformed plan is reported as malformed, never as a deadlock.

This module must not import torch: the CLI and the notebooks import it on every start.
"""

from __future__ import annotations

import gc
import heapq

from .costs import Costs
from .plan import KIND_INDEX, KINDS, Op, Plan, PlanError, ops_of
from .timeline import Timeline


class DeadlockError(PlanError):
    """The plan's order makes ranks wait on each other forever.  ``waits`` maps rank -> (step, missing op)."""

    def __init__(self, message: str, waits: dict[int, tuple[str, str]]):
        super().__init__(message)
        self.waits = waits


class _Malformed(Exception):
    """Raised inside the loop when an op fails a cheap check; Plan.validate() then names the violation."""


def simulate(plan: Plan, costs: Costs | None = None) -> Timeline:
    """Simulate ``plan``; return its Timeline.  Raises PlanError for a malformed plan, DeadlockError when stuck."""
    costs = costs or Costs()
    collecting = gc.isenabled()
    gc.disable()          # the loop makes ~10^5 short-lived tuples and no cycles: don't rescan the plan meanwhile
    try:
        return _run(plan, costs)
    except (_Malformed, LookupError, TypeError, AttributeError):
        plan.validate()   # raises PlanError naming the first violation
        raise
    finally:
        if collecting:
            gc.enable()


def _run(plan: Plan, costs: Costs) -> Timeline:
    plan.validate_structure()
    table = costs.stage_tables(plan)
    P, m, S = plan.p, plan.m, plan.num_stages
    owner = [-1] * S
    for s, r in plan.rank_of_stage().items():
        owner[s] = r
    route_id, prev_of, next_of, on_route = plan.route_links()
    scale = [costs.scale(i) for i in range(m)]
    dur_f, dur_b, dur_w = ([table[k].get(s, 0.0) for s in range(S)] for k in KINDS)
    comm, overlap = costs.comm, costs.overlap
    ranks = plan.ranks

    done: list[float | None] = [None] * (m * S * 3)   # end time of each op once it is scheduled
    waiting: list[list[int] | None] = [None] * len(done)  # op key -> ranks parked on it
    pos = [0] * P
    free = [0.0] * P
    starts: list[list[float]] = [[] for _ in range(P)]
    ends: list[list[float]] = [[] for _ in range(P)]
    events = [(0.0, r) for r in range(P)]              # (time, rank): rank r may proceed from `time` on
    pop, push = heapq.heappop, heapq.heappush

    while events:
        _, r = pop(events)
        steps, i, n, t_free = ranks[r], pos[r], len(ranks[r]), free[r]
        add_start, add_end = starts[r].append, ends[r].append
        while i < n:                                       # run rank r until a step waits for a missing input
            step = steps[i]
            ops = (step,) if type(step) is Op else step     # an Overlap iterates over its two ops
            start, dur, missing = t_free, 0.0, -1
            for op in ops:
                kind, mb, s = op
                rid, base = route_id[mb], mb * S
                if kind == "F":                                # F waits for F of the previous stage
                    q = prev_of[rid][s]
                    key, dep, local, durs = (base + s) * 3, (base + q) * 3 if q >= 0 else -1, -1, dur_f
                elif kind == "B":                              # B waits for its own F and B of the next stage
                    q = next_of[rid][s]
                    key, dep, durs = (base + s) * 3 + 1, (base + q) * 3 + 1 if q >= 0 else -1, dur_b
                    local = key - 1
                elif kind == "W":                              # W waits for its own B
                    key, dep, durs = (base + s) * 3 + 2, -1, dur_w
                    local = key - 1
                else:
                    raise _Malformed
                if dep >= 0:                                   # the input from another stage, most often missing
                    t = done[dep]
                    if t is None:
                        missing = dep
                        break
                    if comm and owner[q] != r:
                        t += comm
                    if t > start:
                        start = t
                if local >= 0:
                    t = done[local]
                    if t is None:
                        missing = local
                        break
                    if t > start:
                        start = t
                # checked only once the op can run: a malformed op raises before anything is recorded
                if not (0 <= mb < m and 0 <= s < S and owner[s] == r and on_route[rid][s]) or done[key] is not None:
                    raise _Malformed
                dur += durs[s] * scale[mb]
            if missing >= 0:
                if waiting[missing] is None:
                    waiting[missing] = [r]
                else:
                    waiting[missing].append(r)
                break
            if len(ops) == 1:
                keys = (key,)
            else:
                keys = [(op.mb * S + op.stage) * 3 + KIND_INDEX[op.kind] for op in ops]
                dur *= overlap
            t_free = start + dur
            add_start(start)
            add_end(t_free)
            for key in keys:
                done[key] = t_free
                if waiting[key] is not None:
                    for w in waiting[key]:
                        push(events, (t_free, w))          # its input arrives no earlier than t_free
            i += 1
        pos[r], free[r] = i, t_free
    executed = len(done) - done.count(None)

    split = any(t is not None for t in done[2::3])
    required = sum(map(len, plan.routes)) * (3 if split else 2)
    if executed != required or any(pos[r] < len(ranks[r]) for r in range(P)):
        plan.validate()                                    # a malformed plan is reported as such first
        raise _deadlock(plan, pos, done)
    return Timeline(P, starts, ends, [list(st) for st in ranks], table["act"],
                    release="W" if split else "B", name=plan.name)


def _deadlock(plan: Plan, pos: list[int], done: list) -> DeadlockError:
    S = plan.num_stages
    where = {op: (r, i) for r, steps in enumerate(plan.ranks) for i, st in enumerate(steps) for op in ops_of(st)}
    waits, parts = {}, []
    for r, steps in enumerate(plan.ranks):
        if pos[r] == len(steps):
            continue
        step = steps[pos[r]]
        missing = next(d for op in ops_of(step) for d in plan.dependencies(op)
                       if done[(d.mb * S + d.stage) * 3 + KIND_INDEX[d.kind]] is None)
        waits[r] = (str(step), str(missing))
        owner, at = where[missing]
        held = f"rank {owner}'s step {at}" if owner != r else f"its own later step {at}"
        parts.append(f"rank {r} waits at {step} (step {pos[r]}) for {missing} ({held})")
    return DeadlockError(f"deadlock after {sum(pos)}/{sum(map(len, plan.ranks))} steps: " + "; ".join(parts), waits)
