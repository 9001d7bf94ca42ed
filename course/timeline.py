"""A Timeline: the spans each rank ran, simulated or measured, and the metrics derived from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from .plan import Op, Plan, Step, ops_of


class Span(NamedTuple):
    rank: int
    start: float
    end: float
    step: Step   # an Op, or an Overlap of two ops


@dataclass
class Timeline:
    """Spans per rank (in execution order) plus memory over time.

    ``memory[r]`` is a step function [(time, live activations), ...] for rank r; units are one micro-batch's
    activations on one rank's share of the model (so 1F1B's first stage peaks at p).
    ``unit`` names the time axis: "cost units" for simulations, "s" for measured runs.
    """

    p: int
    spans: list[list[Span]]
    memory: list[list[tuple[float, float]]]
    name: str = ""
    unit: str = "cost units"
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_spans(cls, plan: Plan, spans: list[list[Span]], act: dict[int, float] | None = None,
                   name: str | None = None, unit: str = "cost units") -> "Timeline":
        """Build a timeline from per-rank spans; memory follows the activation rule below.

        A micro-batch's activations on a stage are allocated when its F starts and freed when its backward
        completes: the full backward, or W when the plan splits B and W.
        """
        if act is None:
            act = {s: plan.p / plan.chunks for s in plan.chunk_of_stage()}
        release = "W" if plan.split_backward else "B"
        memory = []
        for rank_spans in spans:
            level, points = 0.0, [(0.0, 0.0)]
            for sp in rank_spans:
                ops = ops_of(sp.step)
                grow = sum(act[op.stage] for op in ops if op.kind == "F")
                if grow:
                    level += grow
                    points.append((sp.start, level))
                shrink = sum(act[op.stage] for op in ops if op.kind == release)
                if shrink:
                    level -= shrink
                    points.append((sp.end, level))
            memory.append(points)
        return cls(plan.p, spans, memory, name or plan.name, unit)

    # ---- metrics ---------------------------------------------------------------------------------
    @cached_property
    def start(self) -> float:
        return min((rs[0].start for rs in self.spans if rs), default=0.0)

    @cached_property
    def makespan(self) -> float:
        """From the first start to the last end over all ranks."""
        return max((rs[-1].end for rs in self.spans if rs), default=0.0) - self.start

    @cached_property
    def busy(self) -> list[float]:
        return [sum(sp.end - sp.start for sp in rs) for rs in self.spans]

    @cached_property
    def idle(self) -> list[float]:
        """Idle time inside each rank's own window (first start to last end), as the zero-bubble paper counts."""
        return [(rs[-1].end - rs[0].start - b) if rs else 0.0 for rs, b in zip(self.spans, self.busy)]

    @cached_property
    def bubble_ratio(self) -> float:
        """1 - busy / (ranks x makespan): the share of the rectangle ranks x makespan spent idle."""
        total = self.p * self.makespan
        return 1.0 - sum(self.busy) / total if total > 0 else 0.0

    @cached_property
    def peak_activations(self) -> list[float]:
        return [max(level for _, level in pts) for pts in self.memory]

    def ops(self, rank: int) -> list[str]:
        """The tokens rank ``rank`` ran, in order (compare with Plan.rank_tokens)."""
        return [str(sp.step) for sp in self.spans[rank]]

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


__all__ = ["Span", "Timeline", "Op"]
