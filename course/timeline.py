"""A Timeline: the spans each rank ran, simulated or measured, and the metrics derived from them."""

from __future__ import annotations

from functools import cached_property
from itertools import accumulate, chain
from operator import itemgetter
from typing import NamedTuple

from .costs import Costs
from .plan import Op, Plan, Step, ops_of

_KIND, _KIND_STAGE = itemgetter(0), itemgetter(0, 2)   # an Op's kind; its kind and stage


class Span(NamedTuple):
    rank: int
    start: float
    end: float
    step: Step   # an Op, or an Overlap of two ops


class Timeline:
    """What each rank ran and when: simulated (time in cost units) or measured (seconds).

    Stored as columns per rank (``starts[r]``, ``ends[r]``, ``steps[r]``, in execution order) because simulations
    reach 10^5 ops; ``spans[r]`` gives the same as Span tuples.  ``memory[r]`` is a step function
    [(time, live activations), ...]: a micro-batch's activations on a stage are allocated when its F starts and
    freed when its backward completes (the full backward; when B and W are split, B frees ``1 - w_mem`` of it and
    W the remaining ``w_mem``, so the default ``w_mem=1`` holds everything until W); units are one micro-batch's
    activations on one rank's share of the model, so 1F1B's first stage peaks at p.
    """

    def __init__(self, p: int, starts: list[list[float]], ends: list[list[float]], steps: list[list[Step]],
                 act: dict[int, float], release: str = "B", name: str = "", unit: str = "cost units",
                 meta: dict | None = None, w_mem: float = 1.0):
        self.p, self.starts, self.ends, self.steps = p, starts, ends, steps
        self.act, self.release, self.name, self.unit = act, release, name, unit
        self.w_mem = w_mem
        self.meta = meta or {}

    @classmethod
    def from_spans(cls, plan: Plan, spans: list[list[Span]], act: dict[int, float] | None = None,
                   name: str | None = None, unit: str = "s", meta: dict | None = None,
                   w_mem: float = 1.0) -> "Timeline":
        """Build a timeline from per-rank spans (e.g. measured by the live runtime)."""
        if act is None:
            act = Costs().stage_tables(plan)["act"]
        return cls(plan.p, [[sp.start for sp in rs] for rs in spans], [[sp.end for sp in rs] for rs in spans],
                   [[sp.step for sp in rs] for rs in spans], act, "W" if plan.split_backward else "B",
                   name if name is not None else plan.name, unit, meta, w_mem)

    @cached_property
    def spans(self) -> list[list[Span]]:
        return [list(map(Span, [r] * len(self.steps[r]), self.starts[r], self.ends[r], self.steps[r]))
                for r in range(self.p)]

    @cached_property
    def _changes(self) -> list[list[tuple[float, float]]]:
        """Per rank, per step: (the change in live activations when it starts, the change when it ends).

        The memory rule: F allocates its stage's ``act`` when it starts; the backward frees it when it ends
        (split backward: B frees ``1 - w_mem`` of it and W the remaining ``w_mem``).  A pair allocates first and
        frees last."""
        split = self.release == "W"
        frees = {"F": 0.0, "B": 1.0 - self.w_mem if split else 1.0, "W": self.w_mem if split else 0.0}
        change = {(k, s): (a if k == "F" else 0.0, -a * frees[k]) for k in frees for s, a in self.act.items()}
        sizes = set(self.act.values())
        by_kind = {k: change[k, s] for k, s in change} if len(sizes) == 1 else None   # one size: the kind tells
        out = []
        for steps in self.steps:
            if set(map(type, steps)) <= {Op}:        # plain ops: one lookup each, in C
                out.append(list(map(by_kind.__getitem__, map(_KIND, steps))) if by_kind is not None
                           else list(map(change.__getitem__, map(_KIND_STAGE, steps))))
            else:
                out.append([tuple(map(sum, zip(*(change[o.kind, o.stage] for o in ops_of(st))))) for st in steps])
        return out

    @cached_property
    def memory(self) -> list[list[tuple[float, float]]]:
        memory = []
        for starts, ends, changes in zip(self.starts, self.ends, self._changes):
            points, level = [(0.0, 0.0)], 0.0

            def add(t, level):       # a free and an allocation at the same instant make one point, not a spike
                if points[-1][0] == t:
                    points[-1] = (t, level)
                else:
                    points.append((t, level))
            for start, end, (up, down) in zip(starts, ends, changes):
                if up > 0:
                    level += up
                    add(start, level)
                if down < 0:
                    level += down
                    add(end, level)
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


__all__ = ["Span", "Timeline"]
