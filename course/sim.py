"""Event-driven simulation of a Plan under Costs.

Each rank runs its steps in order, each as soon as the rank is free and the step's inputs have arrived
(producer end + ``comm`` when the producer sits on another rank); durations are floats, there are no ticks.

Events are kept in a priority queue ordered by time: an event (t, r) says rank r may go on from time t.  The
rank popped runs its steps until one needs an input that is not computed yet; it then parks on that input, and
the step that computes it queues a new event for the rank.  Every step is computed once and each park needs a
new step to end it, so the loop ends after at most one event per step: a plan that cannot finish leaves ranks
parked, and is reported as a deadlock naming what each one waits for.

Plans reach 10^5 ops, so a plan is first compiled, with numpy, into flat columns the loop only indexes (see
CompiledPlan); the same pass checks every op, and on any violation Plan.validate() names the first one, so a
malformed plan is reported as malformed, never as a deadlock.  Compiling depends on the plan alone: compile
once to simulate one plan under many costs.

This module must not import torch: the CLI and the notebooks import it on every start.
"""

from __future__ import annotations

import gc
import heapq
from contextlib import contextmanager

from .costs import Costs
from .plan import KIND_INDEX, KINDS, Op, Overlap, Plan, PlanError, is_step, ops_of
from .timeline import Timeline


class DeadlockError(PlanError):
    """The plan's order makes ranks wait on each other forever.  ``waits`` maps rank -> (step, missing op)."""

    def __init__(self, message: str, waits: dict[int, tuple[str, str]]):
        super().__init__(message)
        self.waits = waits


class _Malformed(Exception):
    """Raised while compiling when an op fails a check; Plan.validate() then names the violation."""


class CompiledPlan:
    """A plan checked and laid out for the event loop once, to simulate under any number of Costs.

    ``simulate(plan, costs)`` compiles and runs once; keep a CompiledPlan to run one plan under many costs
    (sweeps, micro-batch orderings).  It copies the plan's steps: later edits to the plan are not seen.

    The layout: flat columns over entries, rank r running entries ``start[r]`` to ``stop[r] - 1`` in order, with
    a few unused entries between ranks (regions of 2^k entries would otherwise share cache sets).  An op is one
    entry.  It waits for at most one input, the output of entry ``dep[i]`` (-1: none), which arrives ``comm``
    after that entry ends when it comes from another rank (``cross[i]``).  Inputs from the op's own stage (B
    needs its F, W its B) are checked here to come earlier on the same rank, so they are ready by then.  An
    overlapped pair is three entries: its first op (duration 0: the pair starts no earlier than that op's
    input), its second op (the pair's whole duration: the span), and a relay of duration 0 that hands out the
    first op's output when the pair ends.  So each entry's output is the input of at most one entry that can
    run (a pair holding an op and its own F waits on its relay, and never starts).
    """

    _GAP = 8      # unused entries between ranks (see above)

    def __init__(self, plan: Plan):
        try:
            with _gc_paused():
                self._compile(plan)
            return
        except (_Malformed, LookupError, TypeError, AttributeError, ValueError) as e:
            error = e
        plan.validate()   # raises PlanError naming the first violation (outside the handler: no chained noise)
        raise error

    def _compile(self, plan: Plan) -> None:
        import numpy as np

        owner_of = plan.validate_structure()
        P, m, S = plan.p, plan.m, plan.num_stages
        route_id, prev_of, next_of, on_route = plan.route_links()    # the last three flattened: [route * S + stage]
        route_id, prev_of, next_of = np.array(route_id), np.array(prev_of).ravel(), np.array(next_of).ravel()
        on_route = np.array([list(mask) for mask in on_route], dtype=bool).ravel()
        owner = np.full(S + 1, -1)               # owner[-1] = -1: the "no stage" of a missing neighbour
        for s, r in owner_of.items():
            owner[s] = r
        kind, mb, stage, op_bounds, first = _columns(plan)
        n = len(kind)
        rank = np.repeat(np.arange(P), np.diff(op_bounds))

        # The checks of Plan.validate, vectorised: known kind, micro-batch and stage; the stage on this rank and
        # on the micro-batch's route; every required op exactly once; B after its F and W after its B on the rank.
        if ((mb < 0) | (mb >= m) | (stage < 0) | (stage >= S)).any():
            raise _Malformed
        link = route_id[mb] * S + stage
        if (owner[stage] != rank).any() or not on_route[link].all():
            raise _Malformed
        key = (mb * S + stage) * 3 + kind
        index = np.arange(n)
        op_of_key = np.full(3 * m * S, -1)
        op_of_key[key] = index
        split = bool((kind == 2).any())
        if (op_of_key[key] != index).any() or n != sum(map(len, plan.routes)) * (3 if split else 2):
            raise _Malformed                     # a duplicate (or, with the count, a missing op)
        later = kind > 0
        if (op_of_key[key[later] - 1] > index[later]).any():
            raise _Malformed

        # The input from another stage: the F before on the route for F, the B after it for B; none for W.
        q = np.where(kind == 0, prev_of[link], np.where(kind == 1, next_of[link], -1))
        dep = np.where(q >= 0, op_of_key[(mb * S + q) * 3 + kind], -1)

        # Entries: each rank's ops in order, a relay after each pair's second op, _GAP entries between ranks.
        second = first + 1
        entry = index + np.searchsorted(second, index) + self._GAP * rank   # relays before an op: pairs before it
        relay = entry[second] + 1
        out = entry.copy()                       # the entry that outputs each op
        out[first] = relay
        own = later[second] & (key[second] - 1 == key[first])
        dep[second[own]] = first[own]            # the pair holds an op and its own F (or B): it never starts
        size = n + len(first) + self._GAP * P
        dep_e, cross = np.full(size, -1), np.zeros(size, bool)
        dep_e[entry] = np.where(dep >= 0, out[dep], -1)
        cross[entry] = (q >= 0) & (owner[q] != rank)
        ops = np.array(op_bounds)
        start = ops[:-1] + np.searchsorted(second, ops[:-1]) + self._GAP * np.arange(P)
        stop = start + np.diff(ops + np.searchsorted(second, ops))
        self.spans: dict[int, list[int]] = {}    # ranks with pairs: their entries that are spans
        for r in set(rank[first].tolist()):
            is_span = np.ones(stop[r] - start[r], bool)
            is_span[entry[first[rank[first] == r]] - start[r]] = False
            is_span[relay[rank[first] == r] - start[r]] = False
            self.spans[r] = (np.flatnonzero(is_span) + start[r]).tolist()

        self.plan = Plan([list(steps) for steps in plan.ranks], m, plan.placement, plan.routes, plan.name)
        self.split = split
        self.dep, self.start, self.stop = dep_e.tolist(), start.tolist(), stop.tolist()
        self.size, self.cross = size, cross
        self.kind, self.mb, self.stage, self.entry, self.first, self.second = kind, mb, stage, entry, first, second
        self.op_of_key, self.out = op_of_key, out   # op key -> op -> the entry that outputs it (for deadlocks)

    def simulate(self, costs: Costs | None = None) -> Timeline:
        """Run the plan under ``costs``; return its Timeline.  Raises DeadlockError when it cannot finish."""
        import numpy as np

        costs = costs or Costs()
        plan = self.plan
        table = costs.stage_tables(plan, self.split)
        durs = np.array([[table[k].get(s, 0.0) for s in range(plan.num_stages)] for k in KINDS])
        dur = durs[self.kind, self.stage] * np.array([costs.scale(i) for i in range(plan.m)])[self.mb]
        dur_e = np.zeros(self.size)
        dur_e[self.entry] = dur
        dur_e[self.entry[self.first]] = 0.0
        dur_e[self.entry[self.second]] = costs.overlap * (dur[self.first] + dur[self.second])
        delay = (self.cross * float(costs.comm)).tolist() if costs.comm else [0.0] * self.size
        with _gc_paused():
            begin, end, pos = _run(self.dep, delay, dur_e.tolist(), self.start, self.stop, plan.p)
        if pos != self.stop:
            raise self._deadlock(pos, end)
        starts, ends = [], []
        for r, (lo, hi) in enumerate(zip(self.start, self.stop)):
            if r in self.spans:
                starts.append([begin[i] for i in self.spans[r]])
                ends.append([end[i] for i in self.spans[r]])
            else:
                starts.append(begin[lo:hi])
                ends.append(end[lo:hi])
        return Timeline(plan.p, starts, ends, [list(steps) for steps in plan.ranks], table["act"],
                        release="W" if self.split else "B", name=plan.name, w_mem=costs.w_mem)

    def _deadlock(self, pos: list[int], end: list) -> DeadlockError:
        plan, S = self.plan, self.plan.num_stages
        where = {op: (r, i) for r, steps in enumerate(plan.ranks) for i, st in enumerate(steps) for op in ops_of(st)}
        waits, parts, steps_done = {}, [], 0
        for r, steps in enumerate(plan.ranks):
            at, entry = 0, self.start[r]         # the step that holds entry pos[r]
            while at < len(steps):
                width = 3 if type(steps[at]) is Overlap else 1   # a pair is three entries
                if entry + width > pos[r]:
                    break
                entry, at = entry + width, at + 1
            steps_done += at
            if at == len(steps):
                continue
            step = steps[at]
            missing = next(d for op in ops_of(step) for d in plan.dependencies(op)
                           if end[self.out[self.op_of_key[(d.mb * S + d.stage) * 3 + KIND_INDEX[d.kind]]]] is None)
            waits[r] = (str(step), str(missing))
            owner, step_at = where[missing]
            held = f"rank {owner}'s step {step_at}" if owner != r else f"its own later step {step_at}"
            parts.append(f"rank {r} waits at {step} (step {at}) for {missing} ({held})")
        total = sum(map(len, plan.ranks))
        return DeadlockError(f"deadlock after {steps_done}/{total} steps: " + "; ".join(parts), waits)


def simulate(plan: Plan, costs: Costs | None = None) -> Timeline:
    """Simulate ``plan``; return its Timeline.  Raises PlanError for a malformed plan, DeadlockError when stuck."""
    return CompiledPlan(plan).simulate(costs)


@contextmanager
def _gc_paused():
    """Compiling and running make 10^5 short-lived objects and no cycles: don't rescan the plan meanwhile."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _run(dep: list[int], delay: list[float], dur: list[float], lo: list[int], hi: list[int], P: int):
    """The event loop over CompiledPlan's columns (rank r runs entries lo[r] to hi[r] - 1): each entry's begin
    and end time, and the entry where each rank stopped."""
    n = len(dep)
    begin: list[float] = [0.0] * n
    end: list[float | None] = [None] * n       # when each entry ends, once it is scheduled
    waiting = [-1] * n                          # entry -> the rank parked on its output
    pos, free = lo[:], [0.0] * P
    events = [(0.0, r) for r in range(P)]      # (time, rank): rank r may proceed from `time` on
    pop, push = heapq.heappop, heapq.heappush

    while events:
        _, r = pop(events)
        i, last, t_free = pos[r], hi[r], free[r]
        while i < last:                         # run rank r until an entry waits for its input
            start, d = t_free, dep[i]
            if d >= 0:
                t = end[d]
                if t is None:                   # not computed yet: park until it is
                    waiting[d] = r
                    break
                t += delay[i]
                if t > start:
                    start = t
            t_free = start + dur[i]
            begin[i] = start
            end[i] = t_free
            if waiting[i] >= 0:
                push(events, (t_free, waiting[i]))   # its input arrives no earlier than t_free
            i += 1
        pos[r], free[r] = i, t_free
    return begin, end, pos


def _columns(plan: Plan):
    """Kind (0, 1, 2 for F, B, W), micro-batch and stage of every op as arrays, rank after rank, a pair as its
    two ops; where each rank's ops begin (and the total at the end); the index of each pair's first op."""
    import numpy as np

    kinds, mbs, stages, op_bounds, firsts = [], [], [], [0], []
    for steps in plan.ranks:
        if set(map(type, steps)) <= {Op}:
            cols = list(zip(*steps)) or [(), (), ()]
        else:
            ops = []
            for st in steps:
                if not is_step(st):
                    raise _Malformed
                if type(st) is Overlap:
                    firsts.append(op_bounds[-1] + len(ops))
                ops.extend(ops_of(st))
            cols = list(zip(*ops))
        kinds.append("".join(cols[0]))
        mbs.extend(cols[1])
        stages.extend(cols[2])
        op_bounds.append(len(mbs))
    letters = np.frombuffer("".join(kinds).encode(), np.uint8)
    kind_of_letter = np.full(256, -1)
    kind_of_letter[[ord(letter) for letter in KIND_INDEX]] = list(KIND_INDEX.values())
    kind = kind_of_letter[letters]
    mb, stage = np.array(mbs), np.array(stages)    # their dtype tells whether all are integers
    if len(kind) != len(mb) or (kind < 0).any() or mb.dtype.kind not in "biu" or stage.dtype.kind not in "biu":
        raise _Malformed
    return kind, mb, stage, op_bounds, np.array(firsts, np.int64)
