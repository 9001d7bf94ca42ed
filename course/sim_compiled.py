"""The compiled simulator: the rule of :mod:`course.sim`, laid out for speed.

``course.sim.simulate`` is the reference: read it first.  This module gives the same spans, peaks, memory
curves and deadlock reports (tests/test_sim.py checks it on every registered schedule and on random plans),
but it first compiles the plan, with numpy, into flat columns that a tight loop only indexes: a rank runs
until an input is missing, parks on it, and is woken when it is computed (no queue by time: see ``_run``).
Compiling depends on the plan alone, so a CompiledPlan simulates one plan under many Costs: that is what the
ordering search (one simulation per search node), chapter 7's sweeps and the benchmarks need; the CLI and
several iterations (course.iterations) use it for its speed on 10^5 ops (about 6x the plain simulator's,
benchmarks/bench_simulator.py).  The same compile pass checks every op, vectorised; on any violation
``Plan.validate()`` names the first one, so a malformed plan is reported as malformed, never as a deadlock.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from .costs import Costs
from .plan import KINDS, Overlap, Plan, gc_paused, is_step, ops_of
from .sim import DeadlockError, deadlock_report
from .timeline import Timeline

_KIND = {k: i for i, k in enumerate(KINDS)}   # F, B, W -> 0, 1, 2


class _Malformed(Exception):
    """Raised while compiling when an op fails a check; Plan.validate() then names the violation."""


class CompiledPlan:
    """A plan checked and laid out for the event loop once, to simulate under any number of Costs.

    The layout: flat columns over entries, rank r running entries ``start[r]`` to ``stop[r] - 1`` in order.
    An op is one entry.  It waits for at most one input, the output of entry ``dep[i]`` (-1: none), which
    arrives ``comm`` after that entry ends when it comes from another rank (``cross[i]``).  Inputs from the
    op's own stage (B needs its F, W its B) are checked here to come earlier on the same rank, so they are
    ready by then.  An overlapped pair is three entries: its first op (duration 0: the pair starts no earlier
    than that op's input), its second op (the pair's whole duration: the span), and a relay of duration 0 that
    hands out the first op's output when the pair ends.  So each entry's output is the input of at most one
    entry that can run (a pair holding an op and its own F waits on its relay, and never starts).
    """

    def __init__(self, plan: Plan):
        try:
            with gc_paused():
                self._compile(plan)
            return
        except _Malformed:
            pass
        plan.validate()   # raises PlanError naming the first violation (outside the handler: no chained noise)
        raise AssertionError(f"the compiled checks rejected {plan.name!r} but Plan.validate() accepts it")

    def _compile(self, plan: Plan) -> None:
        owner_of = plan.validate_structure()
        P, m, S = plan.p, plan.m, plan.num_stages
        route_id, prev_of, next_of, on_route = _route_links(plan)   # the last three flattened: [route * S + stage]
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

        # Entries: each rank's ops in order, a relay after each pair's second op.
        second = first + 1
        entry = index + np.searchsorted(second, index)   # relays before an op: pairs before it
        relay = entry[second] + 1
        out = entry.copy()                       # the entry that outputs each op
        out[first] = relay
        own = later[second] & (key[second] - 1 == key[first])
        dep[second[own]] = first[own]            # the pair holds an op and its own F (or B): it never starts
        size = n + len(first)
        dep_e, cross = np.full(size, -1), np.zeros(size, bool)
        dep_e[entry] = np.where(dep >= 0, out[dep], -1)
        cross[entry] = (q >= 0) & (owner[q] != rank)
        is_span = np.ones(size, bool)            # the entries whose times are a step's span, in rank order
        is_span[entry[first]] = False
        is_span[relay] = False
        ops = np.array(op_bounds)
        start = ops[:-1] + np.searchsorted(second, ops[:-1])

        self.plan, self.split = plan, split
        self.dep, self.start = dep_e.tolist(), start.tolist()
        self.stop = (start + np.diff(ops + np.searchsorted(second, ops))).tolist()
        self.size, self.cross, self.span_entries = size, cross, np.flatnonzero(is_span)

    def simulate(self, costs: Costs | None = None) -> Timeline:
        """Run the plan under ``costs``; return its Timeline.  Raises DeadlockError when it cannot finish."""
        costs = costs or Costs()
        plan = self.plan
        dur = list(chain.from_iterable(costs.durations(plan)))
        if len(dur) < self.size:                 # pairs: their first op and their relay take no time
            spans = np.zeros(self.size)
            spans[self.span_entries] = dur
            dur = spans.tolist()
        delay = (self.cross * float(costs.comm)).tolist() if costs.comm else [0.0] * self.size
        with gc_paused():
            begin, end, pos = _run(self.dep, delay, dur, self.start, self.stop, plan.p)
        if pos != self.stop:
            raise self._deadlock(pos, end)
        starts, ends, at = [], [], 0
        spans = self.span_entries.tolist() if len(self.span_entries) < self.size else None
        for steps, lo, hi in zip(plan.ranks, self.start, self.stop):
            if hi - lo == len(steps):            # no pairs on this rank: its entries are its steps
                starts.append(begin[lo:hi])
                ends.append(end[lo:hi])
            else:
                mine = spans[at:at + len(steps)]
                starts.append([begin[i] for i in mine])
                ends.append([end[i] for i in mine])
            at += len(steps)
        return Timeline(plan.p, starts, ends, plan.ranks, costs.stage_tables(plan, self.split)["act"],
                        release="W" if self.split else "B", name=plan.name, w_mem=costs.w_mem)

    def _deadlock(self, pos: list[int], end: list) -> DeadlockError:
        """The plain simulator's report (one wording in one place), from the step where each rank stopped."""
        plan, stopped = self.plan, []
        for r, steps in enumerate(plan.ranks):
            at, entry = 0, self.start[r]         # the step that holds entry pos[r]
            while at < len(steps):
                width = 3 if type(steps[at]) is Overlap else 1   # a pair is three entries
                if entry + width > pos[r]:
                    break
                entry, at = entry + width, at + 1
            stopped.append(at)
        done = {op for steps, at in zip(plan.ranks, stopped) for st in steps[:at] for op in ops_of(st)}
        return deadlock_report(plan, stopped, done)


def _run(dep: list[int], delay: list[float], dur: list[float], lo: list[int], hi: list[int], P: int):
    """The event loop over CompiledPlan's columns (rank r runs entries lo[r] to hi[r] - 1): each entry's begin
    and end time, and the entry where each rank stopped.

    The ranks that may proceed wait on a plain stack, not a queue by time: an entry's times depend only on its
    rank's previous entry and its input, both known when it runs, so the order in which ranks proceed changes
    nothing but the cost of keeping them in order."""
    n = len(dep)
    begin: list[float] = [0.0] * n
    end: list[float | None] = [None] * n       # when each entry ends, once it is scheduled
    waiting = [-1] * n                          # entry -> the rank parked on its output
    pos, free = lo[:], [0.0] * P
    ready = list(range(P))                      # the ranks that may proceed
    while ready:
        r = ready.pop()
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
                ready.append(waiting[i])        # its input is now known
            i += 1
        pos[r], free[r] = i, t_free
    return begin, end, pos


def _route_links(plan: Plan):
    """Per distinct route: the stage before and after each stage (-1 where none) and a membership mask, as flat
    arrays indexed [route id * S + stage]; and the route id of each micro-batch."""
    ids: dict[tuple, int] = {}
    route_id = [ids.setdefault(route, len(ids)) for route in plan.routes]
    S = plan.num_stages
    prev = np.full((len(ids), S), -1)
    nxt = np.full((len(ids), S), -1)
    on_route = np.zeros((len(ids), S), bool)
    for k, route in enumerate(ids):
        for a, b in zip(route, route[1:]):
            nxt[k, a], prev[k, b] = b, a
        on_route[k, list(route)] = True
    return np.array(route_id), prev.ravel(), nxt.ravel(), on_route.ravel()


def _columns(plan: Plan):
    """Kind (0, 1, 2 for F, B, W), micro-batch and stage of every op as arrays, rank after rank, a pair as its
    two ops; where each rank's ops begin (and the total at the end); the index of each pair's first op."""
    kinds, mbs, stages, op_bounds, firsts = [], [], [], [0], []
    for steps, plain in zip(plan.ranks, plan.op_ranks):
        if plain:
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
        try:
            kinds.append("".join(cols[0]))
        except TypeError:                       # a kind that is not a string
            raise _Malformed from None
        mbs.extend(cols[1])
        stages.extend(cols[2])
        op_bounds.append(len(mbs))
    letters = np.frombuffer("".join(kinds).encode(), np.uint8)
    kind_of_letter = np.full(256, -1)
    kind_of_letter[[ord(letter) for letter in _KIND]] = list(_KIND.values())
    kind = kind_of_letter[letters]
    if len(kind) != len(mbs) or (kind < 0).any():
        raise _Malformed
    return kind, _int_array(mbs), _int_array(stages), op_bounds, np.array(firsts, np.int64)


def _int_array(values: list) -> np.ndarray:
    """``values`` as an integer array; _Malformed unless every value is an int (numpy's dtype tells, in C)."""
    try:
        array = np.array(values)
    except ValueError:                          # ragged nested values
        raise _Malformed from None
    if values and array.dtype.kind not in "biu":
        raise _Malformed
    return array.astype(np.int64)
