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
from collections.abc import Sequence
from dataclasses import dataclass

from .plan import KINDS, Overlap, Plan, Step, ops_of
from .validation import is_number

Value = float | Sequence[float]


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
                            # (Zero Bubble's M_W / M_B; the rule: memory_change below)

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
        ``plan.ranks[r][i]`` (see :meth:`step_duration`), with the tables read once.  (The compiled simulator
        looks the same values up in C: course.fast.durations.)"""
        table, scale = self.op_table(plan), self.mb_scales(plan)
        return [[self._duration(table, scale, step) for step in steps] for steps in plan.ranks]

    def step_duration(self, plan: Plan, step: Step) -> float:
        """How long one step lasts, in cost units: the one place that says it.

        An op lasts its stage's share of ``f``, ``b`` or ``w``; B is the full backward (``b + w``) in a plan
        without W ops.  An overlapped pair lasts ``overlap`` x (its two ops).  Each op is multiplied by its
        micro-batch's scale.  For every step of a plan at once, :meth:`durations` reads the tables once."""
        scale = None if self.mb_scale is None else {op.mb: self.scale(op.mb) for op in ops_of(step)}
        return self._duration(self.op_table(plan), scale, step)

    def _duration(self, table: dict, scale, step: Step) -> float:
        """``step``'s duration from ``table[(kind, stage)]`` and ``scale[mb]``, each micro-batch's multiplier
        (None: every scale is 1)."""
        if type(step) is Overlap:
            a, b = step
            return self.overlap * (self._duration(table, scale, a) + self._duration(table, scale, b))
        kind, mb, stage = step
        return table[kind, stage] if scale is None else table[kind, stage] * scale[mb]

    def op_table(self, plan: Plan, split_backward: bool | None = None) -> dict[tuple[str, int], float]:
        """{(kind, stage): how long that op lasts at micro-batch scale 1} for this plan (``split_backward``: see
        stage_tables)."""
        tables = self.stage_tables(plan, split_backward)
        return {(kind, s): t for kind in KINDS for s, t in tables[kind].items()}

    def mb_scales(self, plan: Plan) -> list[float] | None:
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


def memory_change(kind: str, w_mem: float = 1.0, split: bool = True) -> float:
    """What one op does to its rank's live activations, in its stage's ``act``: the memory rule, said once.

    F allocates 1 (when it starts); the backward frees it (when it ends): a full backward (``split`` False, a plan
    without W ops) all of it, a split one ``1 - w_mem`` at B and the remaining ``w_mem`` at W.  The Timeline
    counts memory with it, and so does every method of the schedule search."""
    if kind == "F":
        return 1.0
    if not split:
        return -1.0 if kind == "B" else 0.0
    return -(1.0 - w_mem) if kind == "B" else -w_mem


def _as_list(v: Value) -> list[float]:
    return [v] if isinstance(v, numbers.Real) else list(v)
