"""A Timeline: the spans each rank ran, simulated or measured, and the metrics derived from them."""

from __future__ import annotations

from functools import cached_property
from itertools import accumulate, chain
from typing import NamedTuple

from .costs import Costs, memory_change
from .plan import Plan, Step, ops_of


class Span(NamedTuple):
    rank: int
    start: float
    end: float
    step: Step   # an Op, or an Overlap of two ops


class Timeline:
    """What each rank ran and when: simulated (time in cost units) or measured (seconds).

    Stored as columns per rank (``starts[r]``, ``ends[r]``, ``steps[r]``, in execution order) because simulations
    reach 10^5 ops; ``spans[r]`` gives the same as Span tuples.  ``memory[r]`` is a step function
    [(time, live activations), ...] under the memory rule of ``course.costs.memory_change``: a micro-batch's
    activations on a stage (``act[stage]``) are allocated when its F starts and freed when its backward ends (when B
    and W are split, B frees ``1 - w_mem`` of them and W the rest); units are one micro-batch's activations on one
    rank's share of the model, so 1F1B's first stage peaks at p.

    Made from a plan and its costs by :meth:`of` (or :meth:`from_spans`), copied with changes by :meth:`replace`.
    """

    def __init__(self, p: int, starts: list[list[float]], ends: list[list[float]], steps: list[list[Step]],
                 act: dict[int, float], split: bool = False, name: str = "", unit: str = "cost units",
                 meta: dict | None = None, w_mem: float = 1.0):
        self.p, self.starts, self.ends, self.steps = p, starts, ends, steps
        self.act, self.split, self.w_mem = act, split, w_mem
        self.name, self.unit, self.meta = name, unit, meta or {}

    @classmethod
    def of(cls, plan: Plan, costs: Costs, starts: list[list[float]], ends: list[list[float]],
           steps: list[list[Step]] | None = None, name: str | None = None, unit: str = "cost units",
           meta: dict | None = None, split_backward: bool | None = None) -> Timeline:
        """The timeline of ``plan`` under ``costs`` (its activations and memory rule) with these start and end
        times (``steps``: what ran, by default the plan's own; ``split_backward``: ``plan.split_backward`` when
        already known, to save a scan of the plan)."""
        split = plan.split_backward if split_backward is None else split_backward
        return cls(plan.p, starts, ends, plan.ranks if steps is None else steps, costs.stage_tables(plan, split)["act"],
                   split, plan.name if name is None else name, unit, meta, costs.w_mem)

    @classmethod
    def from_spans(cls, plan: Plan, spans: list[list[Span]], costs: Costs | None = None, name: str | None = None,
                   unit: str = "s", meta: dict | None = None) -> Timeline:
        """Build a timeline from per-rank spans (e.g. measured by the live runtime)."""
        return cls.of(plan, costs or Costs(), [[sp.start for sp in rs] for rs in spans],
                      [[sp.end for sp in rs] for rs in spans], [[sp.step for sp in rs] for rs in spans], name, unit,
                      meta)

    FIELDS = ("p", "starts", "ends", "steps", "act", "split", "name", "unit", "meta", "w_mem")   # what __init__ takes

    def replace(self, **changes) -> Timeline:
        """A copy with some fields changed (``starts``, ``name``, ``act``, ...)."""
        return type(self)(**{**{name: getattr(self, name) for name in self.FIELDS}, **changes})

    @cached_property
    def spans(self) -> list[list[Span]]:
        return [list(map(Span, [r] * len(self.steps[r]), self.starts[r], self.ends[r], self.steps[r]))
                for r in range(self.p)]

    @cached_property
    def _changes(self) -> list[list[tuple[float, float]]]:
        """Per rank, per step: (the change in live activations when it starts, the change when it ends)."""
        return [[self._change(step) for step in steps] for steps in self.steps]

    def _change(self, step: Step) -> tuple[float, float]:
        """F allocates when it starts, a backward frees when it ends; a pair allocates first and frees last."""
        up = down = 0.0
        for op in ops_of(step):
            change = self.act[op.stage] * memory_change(op.kind, self.w_mem, self.split)
            if change > 0:
                up += change
            else:
                down += change
        return up, down

    @cached_property
    def memory(self) -> list[list[tuple[float, float]]]:
        memory = []
        for starts, ends, changes in zip(self.starts, self.ends, self._changes):
            points, level = [(0.0, 0.0)], 0.0
            for start, end, (up, down) in zip(starts, ends, changes):
                if up > 0:
                    level += up
                    _add_point(points, start, level)
                if down < 0:
                    level += down
                    _add_point(points, end, level)
            memory.append(points)
        return memory

    # ---- metrics ---------------------------------------------------------------------------------
    @cached_property
    def start(self) -> float:
        return min((st[0] for st in self.starts if st), default=0.0)

    @cached_property
    def end(self) -> float:
        return max((max(en) for en in self.ends if en), default=self.start)

    @cached_property
    def makespan(self) -> float:
        """From the first start to the last end over all ranks."""
        return self.end - self.start

    @cached_property
    def busy(self) -> list[float]:
        return [sum(en) - sum(st) for st, en in zip(self.starts, self.ends)]

    @cached_property
    def idle(self) -> list[float]:
        """Idle time inside each rank's own window (first start to last end), as the zero-bubble paper counts."""
        return [(max(en) - st[0] - b) if st else 0.0 for st, en, b in zip(self.starts, self.ends, self.busy)]

    @cached_property
    def bubble_ratio(self) -> float:
        """1 - busy / (ranks x makespan): the share of the rectangle ranks x makespan spent idle."""
        total = self.p * self.makespan
        return 1.0 - sum(self.busy) / total if total > 0 else 0.0

    @cached_property
    def peak_activations(self) -> list[float]:
        # The level only rises when a step starts: the peak is the highest running sum of the changes.
        return [float(max(accumulate(chain.from_iterable(changes), initial=0.0))) for changes in self._changes]

    def ops(self, rank: int) -> list[str]:
        """The tokens rank ``rank`` ran, in order (compare with Plan.rank_tokens)."""
        return [str(step) for step in self.steps[rank]]

    def summary(self) -> dict:
        """The metrics as plain JSON-ready values."""
        return {
            "name": self.name,
            "unit": self.unit,
            "makespan": self.makespan,
            "bubble_ratio": self.bubble_ratio,
            "busy": self.busy,
            "idle": self.idle,
            "peak_activations": self.peak_activations,
        }

    def __repr__(self) -> str:
        return (f"Timeline({self.name!r}, p={self.p}, makespan={self.makespan:g} {self.unit}, "
                f"bubble={self.bubble_ratio:.1%}, peak={[round(x, 3) for x in self.peak_activations]})")


def _add_point(points: list[tuple[float, float]], t: float, level: float) -> None:
    """Append (t, level); a free and an allocation at the same instant make one point, not a spike."""
    if points[-1][0] == t:
        points[-1] = (t, level)
    else:
        points.append((t, level))


__all__ = ["Span", "Timeline"]
