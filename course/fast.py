"""The compiled layer's speed helpers: what makes 10^5-10^6 ops cheap, kept off the pages a learner reads.

``course.plan``, ``course.costs``, ``course.timeline`` and the schedules say each rule plainly; the compiled
simulator (``course.sim_compiled``), the schedule builders that make 10^5 ops at a time and the CLI use these
instead, and tests/test_sim.py holds the results of both paths equal:

- ``gc_paused``: no garbage collection while many short-lived objects without cycles are made;
- ``make_ops``: a column of ops made in C;
- ``plain_ranks``: which ranks hold plain ops only (no overlapped pair), so their fields can be read in C;
- ``durations``: ``Costs.durations`` looked up in C, by an op's kind alone where the kind tells its duration;
- ``FastTimeline``: a Timeline whose memory changes are looked up the same way.

Standard library only, like the simulators.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from contextlib import contextmanager
from functools import cached_property
from itertools import repeat
from operator import itemgetter, mul

from .costs import Costs, memory_change
from .plan import KINDS, Op, Plan, ops_of
from .timeline import Timeline

_KIND, _MB, _STAGE, _KIND_STAGE = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(0, 2)   # an Op's fields


@contextmanager
def gc_paused():
    """Pause the garbage collector: for code that makes 10^5-10^6 ops and other short-lived objects without cycles
    (building a plan, compiling and simulating it), where each collection would only rescan every live op.  At
    1F1B p=64, m=4096 (524k ops) it makes compile + simulate about 1.3x faster and keeps the growth linear; building
    1F1B p=64, m=1024 about 2x faster (benchmarks/bench_simulator.py and bench_schedules.py print both)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def make_ops(kinds: Iterable[str], mbs: Iterable[int], stages: Iterable[int]) -> list[Op]:
    """``[Op(k, i, s) for k, i, s in zip(kinds, mbs, stages)]``, made in C: calling Op's constructor (a Python
    function) once per op takes about twice as long."""
    return list(map(tuple.__new__, repeat(Op), zip(kinds, mbs, stages)))


def plain_ranks(plan: Plan) -> list[bool]:
    """Per rank: True when every step is a plain Op (no overlapped pair), so its ops can be read in C."""
    return [set(map(type, steps)) <= {Op} for steps in plan.ranks]


def durations(costs: Costs, plan: Plan, plain: list[bool], split_backward: bool | None = None) -> list[list[float]]:
    """``costs.durations(plan)``, each rank of plain ops (``plain``, see plain_ranks) looked up in C: each op's
    (kind, stage) in one table, or its kind alone where each kind lasts as long on every stage of the rank, times
    its micro-batch's scale when there are scales (``split_backward``: see Costs.stage_tables)."""
    table, scale = costs.op_table(plan, split_backward), costs.mb_scales(plan)
    everywhere = _by_kind(table, plan.chunk_of_stage())     # None unless each kind lasts as long on every stage
    rows = None                                             # the plain rule's rows, for ranks holding pairs
    out = []
    for r, (steps, is_plain) in enumerate(zip(plan.ranks, plain)):
        if not is_plain:
            rows = rows or costs.durations(plan)
            out.append(rows[r])
            continue
        by_kind = everywhere or _by_kind(table, set(map(_STAGE, steps)))
        if by_kind:                          # an op's kind tells its duration: look that up alone
            row = list(map(by_kind.__getitem__, map(_KIND, steps)))
        else:
            row = list(map(table.__getitem__, map(_KIND_STAGE, steps)))
        if scale is not None:
            row = list(map(mul, row, map(scale.__getitem__, map(_MB, steps))))
        out.append(row)
    return out


def _by_kind(table: dict[tuple[str, int], float], stages) -> dict[str, float] | None:
    """{kind: value} when each kind has one value on all of ``stages``, else None."""
    each = {kind: {table[kind, s] for s in stages} for kind in KINDS}
    return {kind: ts.pop() for kind, ts in each.items() if ts} if all(len(ts) <= 1 for ts in each.values()) else None


class FastTimeline(Timeline):
    """A Timeline (same values) whose memory changes are looked up in C for ranks of plain ops."""

    @cached_property
    def _changes(self) -> list[list[tuple[float, float]]]:
        change = {(kind, s): _split_change(a * memory_change(kind, self.w_mem, self.split))
                  for kind in KINDS for s, a in self.act.items()}
        by_kind = _by_kind(change, self.act)                 # one size on every stage: the kind tells
        out = []
        for steps in self.steps:
            if set(map(type, steps)) <= {Op}:
                out.append(list(map(by_kind.__getitem__, map(_KIND, steps))) if by_kind is not None
                           else list(map(change.__getitem__, map(_KIND_STAGE, steps))))
            else:
                out.append([tuple(map(sum, zip(*(change[o.kind, o.stage] for o in ops_of(st))))) for st in steps])
        return out


def _split_change(x: float) -> tuple[float, float]:
    """(when the op starts, when it ends): an allocation at the start, a release at the end."""
    return (x, 0.0) if x > 0 else (0.0, x)
