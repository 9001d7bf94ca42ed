"""Simulate a plan with one given duration per step (measured ones, or a transformed cost model).

:func:`replay` runs the simulator (``course.sim.simulate(..., durations=...)``: a step starts when its rank is
free and its inputs have arrived, ``comm`` later from another rank) with durations that ``Costs`` cannot
express: each step its own.  ``replay(plan, durations_of(simulate(plan, c)), c.comm)`` reproduces
``simulate(plan, c)`` (tested), so a difference between the two is a difference of durations only.

Two uses: :mod:`course.attribution` replays a trace with its measured op durations; :func:`whole_backward`
models the code path in which a backward that does not defer its W (DeepSeek's ``dualpipe.py``,
``_backward_compute_chunk`` with ``enable_zb=False``: one autograd backward, then ``_send_backward``) releases
the input gradient only after the weight gradient.
"""

from __future__ import annotations

from .costs import Costs
from .plan import Op, Overlap, Plan, ops_of
from .sim import simulate
from .timeline import Timeline
from .validation import is_number


def durations_of(timeline: Timeline) -> list[list[float]]:
    """Each step's duration, per rank in execution order (end - start)."""
    return [[e - s for s, e in zip(st, en)] for st, en in zip(timeline.starts, timeline.ends)]


def replay(plan: Plan, durations: list[list[float]], comm: float = 0.0, name: str | None = None,
           unit: str = "s") -> Timeline:
    """Simulate ``plan`` with step ``plan.ranks[r][i]`` lasting ``durations[r][i]`` (the simulator's rule, one
    given duration per step), in ``unit``.

    Raises ValueError when the durations do not match the plan's steps, and the simulator's DeadlockError
    (with its report) when the order cannot finish, whatever the durations."""
    for r, row in enumerate(durations):
        for i, x in enumerate(row):
            if not is_number(x) or x < 0:
                raise ValueError(f"durations must be finite non-negative numbers, got {x!r} at rank {r}, step {i}")
    tl = simulate(plan, Costs(comm=comm), durations=durations)
    return tl.replace(name=plan.name if name is None else name, unit=unit)


def whole_backward(plan: Plan, costs: Costs, pairs_only: bool = False) -> list[list[float]]:
    """Step durations (cost units) in which a backward whose W runs right after it is one block.

    A B (alone or inside an F&B pair) immediately followed on its rank by its own W is not deferred: the
    block computes dX and dW together and sends dX when both are done.  So that step lasts its own duration
    plus the W's, and the W step lasts 0.  Deferred W's (the zero-bubble part) keep their place and length.
    ``pairs_only`` applies the rule to the backward inside F&B pairs alone (a lone B still sends dX first).
    Replay the result with :func:`replay` to get the schedule under that backward."""
    out = []
    for steps, row in zip(plan.ranks, costs.durations(plan)):   # Costs says how long each step lasts
        row = list(row)
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
