"""The compiled simulator: the rule of :mod:`course.sim`, laid out for speed.

``course.sim.simulate`` is the reference: read it first.  This module gives the same spans, peaks, memory
curves and deadlock reports (tests/test_sim.py checks it on every registered schedule and on random plans),
but it first compiles the plan into flat columns that a tight loop only indexes: a rank runs until an input is
missing, parks on it, and is woken when it is computed (no queue by time: see ``_run``).  Compiling depends on
the plan alone, so a CompiledPlan simulates one plan under many Costs: that is what the ordering search (one
simulation per search node), chapter 7's sweeps and the benchmarks need; the CLI and several iterations
(course.iterations) use it for its speed on 10^5 ops (benchmarks/bench_simulator.py prints both simulators
against the seed chapter's).

Compiling is a handful of passes over whole columns (``zip``, ``map``, dict and set operations: loops that run
in C) instead of a Python loop per op, with the standard library only, like course.sim: the CLI never pays for
importing numpy.  The same passes make Plan.validate's checks; on any violation ``Plan.validate()`` names the
first one, so a malformed plan is reported as malformed, never as a deadlock.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from itertools import count, repeat
from numbers import Integral
from operator import add, itemgetter, le, mul

from .costs import Costs
from .fast import FastTimeline, durations, gc_paused, plain_ranks
from .plan import KINDS, Op, Overlap, Plan, ops_of
from .sim import DeadlockError, deadlock_report
from .timeline import Timeline

_RELAY = {kind: object() for kind in KINDS}    # the kind of a pair's relay entry (see CompiledPlan), by the kind
                                               # of the op it hands out: no plan can name it


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
        with gc_paused():
            try:
                compiled = self._compile(plan)
            except (TypeError, IndexError):      # a field of the wrong type: a micro-batch or a stage not a number
                compiled = False
        if not compiled:
            plan.validate()   # raises PlanError naming the first violation
            raise AssertionError(f"the compiled checks rejected {plan.name!r} but Plan.validate() accepts it")

    def _compile(self, plan: Plan) -> bool:
        """Lay ``plan`` out; False as soon as an op fails one of Plan.validate's checks."""
        owner = plan.validate_structure()        # {stage: rank}
        kinds, mbs, stages, start, stop = [], [], [], [], []
        spans = []     # per rank: the entry of each step's span (None: plain ops, each step is one entry)
        pairs = []     # per pair: the entry of its first op
        plain = plain_ranks(plan)
        for r, steps in enumerate(plan.ranks):
            start.append(len(kinds))
            if plain[r]:                         # plain ops: this rank's three columns in one pass
                ops, span = steps, None
            else:
                ops, span = [], []
                for step in steps:
                    at = len(kinds) + len(ops)
                    if type(step) is Op:
                        ops.append(step)
                    elif type(step) is Overlap and type(step.first) is Op and type(step.second) is Op:
                        a, b = step
                        ops += (a, b, (_RELAY[a.kind], a.mb, a.stage))
                        pairs.append(at)
                        at += 1
                    else:
                        return False             # not an Op or an Overlap of two Ops
                    span.append(at)
            k, i, s = list(zip(*ops)) or [(), (), ()]
            if not (isinstance(sum(s), Integral) and set(s) <= set(plan.placement[r])):
                return False                     # a stage this rank does not hold (one float makes the sum a float)
            kinds += k
            mbs += i
            stages += s
            spans.append(span)
            stop.append(len(kinds))
        size, m, S = len(kinds), plan.m, plan.num_stages
        if size and not (0 <= min(mbs) and max(mbs) < m):
            return False

        # Keys: op (kind, mb, stage) is key slot(kind, stage) + mb, so the keys of one kind and stage are m in a
        # row, all F's first, then all B's, then all W's (3Sm keys); the m keys from NO_OP on name no op (the
        # input of an op that needs none).  Each entry's facts come from one table, looked up by (route, kind,
        # stage): its slot, its input's slot (the stage before it on the route for F, after it for B, none for
        # W) and whether that input comes from another rank.  An op of an unknown kind or off its micro-batch's
        # route is not in the table.
        NO_OP = 3 * S * m

        def slot(kind, stage):
            return NO_OP if stage is None else (KINDS.index(kind) * S + stage) * m

        def from_other_rank(s, neighbour):
            return neighbour is not None and owner[neighbour] != owner[s]

        route_ids: dict[tuple, int] = {}
        route_of = [route_ids.setdefault(route, len(route_ids)) for route in plan.routes]
        table = {}
        for rid, route in enumerate(route_ids):
            for at, s in enumerate(route):
                before = route[at - 1] if at else None
                after = route[at + 1] if at + 1 < len(route) else None
                table[rid, "F", s] = (slot("F", s), slot("F", before), from_other_rank(s, before))
                table[rid, "B", s] = (slot("B", s), slot("B", after), from_other_rank(s, after))
                table[rid, "W", s] = (slot("W", s), NO_OP, False)
                for kind, relay in _RELAY.items():          # a relay hands out its pair's first op
                    table[rid, relay, s] = (slot(kind, s), NO_OP, False)
        routes = repeat(0) if len(route_ids) == 1 else map(route_of.__getitem__, mbs)
        facts = list(map(table.get, zip(routes, kinds, stages)))
        if None in facts:                        # an op of an unknown kind, or off its micro-batch's route
            return False

        # Every required op exactly once: no key twice (a pair's first entry gets a key of its own: its relay
        # hands its op out), and as many ops as required.
        key = list(map(add, map(itemgetter(0), facts), mbs))
        for j, first in enumerate(pairs):
            key[first] = NO_OP + m + j
        entry_of = [-1] * (NO_OP + m + len(pairs))          # key -> the entry that hands that op out
        deque(map(entry_of.__setitem__, key, count()), maxlen=0)     # entry_of[key[i]] = i for every i, in C
        split = "W" in kinds                     # plan.split_backward, read from the column in C
        if (entry_of.count(-1) != len(entry_of) - size      # a key written twice leaves one more key unused
                or size - len(pairs) != sum(map(len, plan.routes)) * (3 if split else 2)):
            return False
        # B after its own F, and W after its own B, on the rank: every F's entry before the B of the same
        # micro-batch and stage, key by key (-1 <= -1 where a micro-batch does not pass a stage).  A pair's
        # first op runs at the pair's first entry.
        runs_at = entry_of
        if pairs:
            runs_at = entry_of[:]
            for first in pairs:
                runs_at[key[first + 2]] = first
        F, B, W = (runs_at[k * S * m:(k + 1) * S * m] for k in range(3))
        if not (all(map(le, F, B)) and (not split or all(map(le, B, W)))):
            return False

        dep = list(map(entry_of.__getitem__, map(add, map(itemgetter(1), facts), mbs)))
        for first in pairs:          # a pair whose second op needs its first (its own F, or B): it waits for
            second = first + 1       # the pair's own end, so it never starts
            if kinds[second] != "F" and runs_at[key[second] - S * m] == first:
                dep[second] = first + 2
        self.plan, self.plain, self.split, self.size = plan, plain, split, size
        self.dep, self.start, self.stop, self.spans = dep, start, stop, spans
        self.cross = list(map(itemgetter(2), facts))
        return True

    def simulate(self, costs: Costs | None = None) -> Timeline:
        """Run the plan under ``costs``; return its Timeline.  Raises DeadlockError when it cannot finish."""
        costs = costs or Costs()
        plan = self.plan
        with gc_paused():
            dur, rows = [], durations(costs, plan, self.plain, self.split)
            for row, span, lo, hi in zip(rows, self.spans, self.start, self.stop):
                if span is not None:             # pairs: their first op and their relay take no time
                    entries = [0.0] * (hi - lo)
                    for i, d in zip(span, row):
                        entries[i - lo] = d
                    row = entries
                dur += row
            delay = list(map(mul, self.cross, repeat(float(costs.comm)))) if costs.comm else [0.0] * self.size
            begin, end, pos = _run(self.dep, delay, dur, self.start, self.stop, plan.p)
            if pos != self.stop:
                raise self._deadlock(pos, end)
            starts, ends = [], []
            for span, lo, hi in zip(self.spans, self.start, self.stop):
                starts.append(begin[lo:hi] if span is None else list(map(begin.__getitem__, span)))
                ends.append(end[lo:hi] if span is None else list(map(end.__getitem__, span)))
        return FastTimeline.of(plan, costs, starts, ends, split_backward=self.split)

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


@lru_cache(maxsize=256)
def compiled(name: str, p: int, m: int) -> CompiledPlan:
    """``CompiledPlan(build(name, p, m))``, built once and kept: a sweep simulates the same plans under many Costs."""
    from .schedules import build  # here: importing the simulator must not load every schedule

    return CompiledPlan(build(name, p, m))


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
        t = free[r]                             # when rank r is free
        for i in range(pos[r], hi[r]):          # run rank r until an entry waits for its input
            d = dep[i]
            if d >= 0:
                arrival = end[d]
                if arrival is None:             # not computed yet: park until it is
                    waiting[d] = r
                    break
                arrival += delay[i]
                if arrival > t:
                    t = arrival
            begin[i] = t
            t += dur[i]
            end[i] = t
            if waiting[i] >= 0:
                ready.append(waiting[i])        # its input is now known
        else:
            i = hi[r]
        pos[r], free[r] = i, t
    return begin, end, pos
