"""Simulate a plan with one given duration per step (measured ones, or a transformed cost model).

:func:`replay` is the simulator's rule (a step starts when its rank is free and its inputs have arrived,
``comm`` later from another rank; :meth:`course.plan.Plan.dependencies` says what a step needs) with durations
that ``Costs`` cannot express: each step its own.  ``replay(plan, durations_of(simulate(plan, c)), c.comm)``
reproduces ``simulate(plan, c)`` (tested), so a difference between the two is a difference of durations only.

Two uses: :mod:`course.attribution` replays a trace with its measured op durations; :func:`whole_backward`
models the code path in which a backward that does not defer its W (DeepSeek's ``dualpipe.py``,
``_backward_compute_chunk`` with ``enable_zb=False``: one autograd backward, then ``_send_backward``) releases
the input gradient only after the weight gradient.
"""

from __future__ import annotations

from collections import defaultdict

from .costs import Costs
from .plan import Op, Overlap, Plan, ops_of
from .timeline import Span, Timeline


def durations_of(timeline: Timeline) -> list[list[float]]:
    """Each step's duration, per rank in execution order (end - start)."""
    return [[e - s for s, e in zip(st, en)] for st, en in zip(timeline.starts, timeline.ends)]


def replay(plan: Plan, durations: list[list[float]], comm: float = 0.0, name: str | None = None,
           unit: str = "s") -> Timeline:
    """Simulate ``plan`` with step ``plan.ranks[r][i]`` lasting ``durations[r][i]``.

    Raises ValueError when the durations do not match the plan's steps, and the simulator's DeadlockError
    (with its report) when the order cannot finish, whatever the durations."""
    if len(durations) != plan.p or any(len(d) != len(s) for d, s in zip(durations, plan.ranks)):
        raise ValueError(f"durations must list one value per step of each rank: the plan has "
                         f"{[len(s) for s in plan.ranks]} steps, got {[len(d) for d in durations]}")
    if any(x < 0 for d in durations for x in d):
        raise ValueError("durations must be non-negative")
    plan.validate()
    owner = plan.rank_of_stage()
    end: dict = {}                       # op -> the time its output exists on its own rank
    waiting = defaultdict(list)          # op -> ranks parked until it is computed
    pos, free = [0] * plan.p, [0.0] * plan.p
    spans: list[list[Span]] = [[] for _ in range(plan.p)]
    ready = list(range(plan.p))
    while ready:
        r = ready.pop()
        steps = plan.ranks[r]
        while pos[r] < len(steps):
            step = steps[pos[r]]
            inside = ops_of(step)
            deps = [d for op in inside for d in plan.dependencies(op) if d not in inside]
            missing = next((d for d in deps if d not in end), None)
            if missing is not None:
                waiting[missing].append(r)
                break
            start = max([free[r]] + [end[d] + (comm if owner[d.stage] != r else 0.0) for d in deps])
            finish = start + durations[r][pos[r]]
            spans[r].append(Span(r, start, finish, step))
            free[r] = finish
            pos[r] += 1
            for op in inside:
                end[op] = finish
                ready.extend(waiting.pop(op, ()))
    if any(pos[r] < len(plan.ranks[r]) for r in range(plan.p)):
        from .sim import simulate
        simulate(plan)                   # the same order deadlocks under any durations: raises with the report
        raise AssertionError("replay stalled on a plan the simulator finishes")   # unreachable
    return Timeline.from_spans(plan, spans, name=plan.name if name is None else name, unit=unit)


def whole_backward(plan: Plan, costs: Costs, pairs_only: bool = False) -> list[list[float]]:
    """Step durations (cost units) in which a backward whose W runs right after it is one block.

    A B (alone or inside an F&B pair) immediately followed on its rank by its own W is not deferred: the
    block computes dX and dW together and sends dX when both are done.  So that step lasts its own duration
    plus the W's, and the W step lasts 0.  Deferred W's (the zero-bubble part) keep their place and length.
    ``pairs_only`` applies the rule to the backward inside F&B pairs alone (a lone B still sends dX first).
    Replay the result with :func:`replay` to get the schedule under that backward."""
    table = costs.stage_tables(plan)
    scale = [costs.scale(i) for i in range(plan.m)]

    def length(op: Op) -> float:
        return table[op.kind][op.stage] * scale[op.mb]

    out = []
    for steps in plan.ranks:
        row = [costs.overlap * sum(map(length, st.ops)) if isinstance(st, Overlap) else length(st) for st in steps]
        for i in range(len(steps) - 1):
            nxt = steps[i + 1]
            if pairs_only and type(steps[i]) is not Overlap:
                continue
            if type(nxt) is Op and nxt.kind == "W" and Op("B", nxt.mb, nxt.stage) in ops_of(steps[i]):
                row[i] += row[i + 1]
                row[i + 1] = 0.0
        out.append(row)
    return out


__all__ = ["durations_of", "replay", "whole_backward"]
