"""Op durations, point-to-point latency and activation memory.

Convention: ``f``, ``b``, ``w`` and ``act`` describe one rank's share of the model, i.e. one stage of the plain
pipeline.  A full backward costs ``b + w``.  A plan that cuts the model into more chunks than ranks (interleaved,
V schedules) gives each chunk its share: with v chunks per rank a chunk costs 1/v.

A value is a scalar (every rank's share costs the same) or a list that describes the model cut into
``len(list)`` equal pieces in order (per stage of the plain pipeline when the list has p entries).  A plan whose
model has L chunks maps chunk k onto those pieces: L a multiple of n splits a piece, n a multiple of L sums
pieces.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from operator import itemgetter, mul
from typing import Sequence, Union

from .plan import KINDS, Overlap, Plan, Step, ops_of
from .validation import is_number

Value = Union[float, Sequence[float]]
_KIND, _MB, _STAGE, _KIND_STAGE = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(0, 2)   # an Op's fields


@dataclass(frozen=True)
class Costs:
    f: Value = 1.0          # forward
    b: Value = 1.0          # input gradient (full backward = b + w)
    w: Value = 1.0          # weight gradient
    comm: float = 0.0       # latency of one point-to-point transfer between different ranks
    act: Value = 1.0        # activations one micro-batch keeps alive on one rank's share
    mb_scale: Sequence[float] | None = None  # per-micro-batch multiplier of f, b, w (uneven sequence lengths)
    overlap: float = 1.0    # an overlapped F&B pair lasts overlap * (F + B); < 1 models hidden communication
    w_mem: float = 1.0      # split backward: the share of a micro-batch's activations still held after B until W
                            # (F allocates 1, B frees 1 - w_mem, W frees w_mem; Zero Bubble's M_W / M_B)

    def __post_init__(self):
        for name in ("f", "b", "w", "act"):
            vals = _as_list(getattr(self, name))
            if not vals or any(not is_number(x) or x < 0 for x in vals):
                raise ValueError(f"cost {name} must be a finite non-negative number or a non-empty list of them, "
                                 f"got {getattr(self, name)!r}")
        if not is_number(self.comm) or self.comm < 0:
            raise ValueError(f"comm must be a finite non-negative number, got {self.comm!r}")
        if not is_number(self.overlap) or self.overlap <= 0:
            raise ValueError(f"overlap must be a finite positive number, got {self.overlap!r}")
        if not is_number(self.w_mem) or not 0 <= self.w_mem <= 1:
            raise ValueError(f"w_mem must be a number in [0, 1], got {self.w_mem!r}")
        if self.mb_scale is not None and any(not is_number(x) or x < 0 for x in self.mb_scale):
            raise ValueError(f"mb_scale must list finite non-negative numbers, got {self.mb_scale!r}")

    def per_chunk(self, name: str, chunks: int, p: int) -> list[float]:
        """``name``'s value for each of the model's ``chunks`` chunks (plan with ``p`` ranks)."""
        vals = _as_list(getattr(self, name))
        if len(vals) == 1:
            return [vals[0] * p / chunks] * chunks
        n = len(vals)
        if chunks % n == 0:
            k = chunks // n
            return [vals[c // k] / k for c in range(chunks)]
        if n % chunks == 0:
            k = n // chunks
            return [sum(vals[c * k:(c + 1) * k]) for c in range(chunks)]
        raise ValueError(f"cost {name} lists {n} values but the plan cuts the model into {chunks} chunks: "
                         f"give a scalar, {p} values (one per plain stage) or {chunks} (one per chunk)")

    def scale(self, mb: int) -> float:
        if self.mb_scale is None:
            return 1.0
        if mb >= len(self.mb_scale):
            raise ValueError(f"mb_scale lists {len(self.mb_scale)} micro-batches but the plan has micro-batch {mb}")
        return self.mb_scale[mb]

    def durations(self, plan: Plan) -> list[list[float]]:
        """How long each step of each rank lasts, in cost units: ``durations(plan)[r][i]`` for
        ``plan.ranks[r][i]`` (see :meth:`step_duration`).  A rank of plain ops is looked up in C (10^5 steps
        at a time): each op's (kind, stage) in one table, times its micro-batch's scale when there are scales."""
        table, scale = self._op_table(plan), self._scales(plan)
        everywhere = _by_kind(table, plan.chunk_of_stage())     # None unless each kind lasts as long on every stage
        out = []
        for steps, plain in zip(plan.ranks, plan.op_ranks):
            if not plain:
                out.append([self._duration(table, scale, step) for step in steps])
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

    def step_duration(self, plan: Plan, step: Step) -> float:
        """How long one step lasts, in cost units: the one place that says it.

        An op lasts its stage's share of ``f``, ``b`` or ``w``; B is the full backward (``b + w``) in a plan
        without W ops.  An overlapped pair lasts ``overlap`` x (its two ops).  Each op is multiplied by its
        micro-batch's scale.  For every step of a plan at once, :meth:`durations` reads the tables once."""
        scale = None if self.mb_scale is None else {op.mb: self.scale(op.mb) for op in ops_of(step)}
        return self._duration(self._op_table(plan), scale, step)

    def _duration(self, table: dict, scale, step: Step) -> float:
        """``step``'s duration from ``table[(kind, stage)]`` and ``scale[mb]``, each micro-batch's multiplier
        (None: every scale is 1)."""
        if type(step) is Overlap:
            a, b = step
            return self.overlap * (self._duration(table, scale, a) + self._duration(table, scale, b))
        kind, mb, stage = step
        return table[kind, stage] if scale is None else table[kind, stage] * scale[mb]

    def _op_table(self, plan: Plan) -> dict[tuple[str, int], float]:
        """{(kind, stage): how long that op lasts at micro-batch scale 1} for this plan."""
        tables = self.stage_tables(plan)
        return {(kind, s): t for kind in KINDS for s, t in tables[kind].items()}

    def _scales(self, plan: Plan) -> list[float] | None:
        """Each micro-batch's multiplier, or None when there are none (every scale is 1)."""
        return None if self.mb_scale is None else [self.scale(i) for i in range(plan.m)]

    def stage_tables(self, plan: Plan, split_backward: bool | None = None) -> dict[str, dict[int, float]]:
        """Per-stage durations {"F": {stage: t}, "B": ..., "W": ..., "act": ...} for this plan.

        In a plan without W ops, "B" already includes the weight gradient (a full backward); pass
        ``split_backward`` when already known, to save a scan of the plan."""
        chunk_of = plan.chunk_of_stage()
        L, p = plan.chunks, plan.p
        f, b, w, act = (self.per_chunk(n, L, p) for n in ("f", "b", "w", "act"))
        full = not (plan.split_backward if split_backward is None else split_backward)
        return {
            "F": {s: f[k] for s, k in chunk_of.items()},
            "B": {s: b[k] + (w[k] if full else 0.0) for s, k in chunk_of.items()},
            "W": {s: w[k] for s, k in chunk_of.items()},
            "act": {s: act[k] for s, k in chunk_of.items()},
        }


def _by_kind(table: dict[tuple[str, int], float], stages) -> dict[str, float] | None:
    """{kind: duration} when each kind lasts as long on all of ``stages``, else None."""
    each = {kind: {table[kind, s] for s in stages} for kind in KINDS}
    return {kind: ts.pop() for kind, ts in each.items() if ts} if all(len(ts) <= 1 for ts in each.values()) else None


def _as_list(v: Value) -> list[float]:
    return [v] if isinstance(v, numbers.Real) else list(v)
