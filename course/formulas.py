"""Closed forms for every schedule: makespan, per-rank idle, peak activations, bubble ratio.

Notation (``course.costs`` convention): ``f``, ``b``, ``w`` are one rank's share of the model, i.e. one stage of the
plain pipeline; ``t = f + b + w`` is one micro-batch's full work on that share (full backward = b + w).  Idle is
counted inside each rank's own window (its first start to its last end), as the zero-bubble paper does; the
whole-pipeline "bubble" of a rank in the DeepSeek table is ``makespan - busy`` instead (see ``dualpipe_table``).

Every closed form assumes uniform stages (scalar f, b, w, act), ``comm = 0`` and no per-micro-batch scaling, plus
the schedule's own conditions listed in its docstring; outside them ``predict`` raises ``OutsideAssumptions`` (a
ValueError) naming the condition, because the simulator, not a formula, is the reference there.  The tests sweep
(p, m, f, b, w) inside the conditions and compare with ``simulate``; the conditions are where the simulator and
the formula were found to agree, and are tight: the docstrings say what happens just outside.

Where published formulas and the simulator disagree (ZB-H1 with W > F, ZB-H2 with B > F, DualPipe with W > 0),
``published_bubble`` says why.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

from .costs import Costs
from .plan import Plan
from .schedules import build, check_pm
from .schedules.interleaved import check_v
from .sim import simulate


class OutsideAssumptions(ValueError):
    """The closed form does not hold for these arguments; the message says which condition failed."""


@dataclass(frozen=True)
class Prediction:
    """What a closed form predicts for one schedule (same units as ``Timeline``)."""

    schedule: str
    p: int
    m: int
    makespan: float
    idle: tuple[float, ...]              # per rank, inside its own window
    busy: tuple[float, ...]              # per rank
    peak_activations: tuple[float, ...]  # per rank, in micro-batch activations of one rank's share
    assumptions: str

    @property
    def bubble_ratio(self) -> float:
        """1 - busy / (p x makespan), as ``Timeline.bubble_ratio``."""
        return 1.0 - sum(self.busy) / (self.p * self.makespan)


def predict(schedule: str, p: int, m: int, costs: Costs | None = None, v: int | None = None) -> Prediction:
    """The closed form of ``schedule`` for p ranks and m micro-batches; raises OutsideAssumptions where none holds."""
    if schedule not in _FORMS:
        raise ValueError(f"no closed form for {schedule!r}; known: {', '.join(_FORMS)}")
    check_pm(p, m)
    if schedule == "interleaved":
        v = 2 if v is None else v
        check_v(v, "interleaved")
    elif v is not None:
        raise ValueError(f"{schedule} does not take v (only interleaved does)")
    costs = costs or Costs()
    f, b, w, act = _uniform(costs)
    form = _FORMS[schedule]
    args = (p, m, f, b, w, costs.overlap) + ((v,) if schedule == "interleaved" else ())
    makespan, idle, busy, peak = form(*args)
    return Prediction(schedule, p, m, makespan, tuple(idle), tuple(busy), tuple(x * act for x in peak),
                      " ".join((form.__doc__ or "").split()))


def _uniform(costs: Costs) -> tuple[float, float, float, float]:
    vals = []
    for name in ("f", "b", "w", "act"):
        x = getattr(costs, name)
        if not isinstance(x, numbers.Real):
            raise OutsideAssumptions(f"closed forms assume uniform stages: give a scalar {name}, not {x!r}")
        vals.append(float(x))
    if costs.comm:
        raise OutsideAssumptions(f"closed forms assume comm = 0 (got comm={costs.comm})")
    if costs.mb_scale is not None and len(set(costs.mb_scale)) > 1:
        raise OutsideAssumptions("closed forms assume equal micro-batches (mb_scale must be None or constant)")
    if costs.mb_scale:
        k = costs.mb_scale[0]
        vals[:3] = [x * k for x in vals[:3]]
    return tuple(vals)


def _need(cond: bool, schedule: str, what: str, **got) -> None:
    if not cond:
        shown = ", ".join(f"{k}={v:g}" for k, v in got.items())
        raise OutsideAssumptions(f"the {schedule} closed form assumes {what} (got {shown}); simulate instead")


# ---- one function per schedule: (p, m, f, b, w, overlap[, v]) -> (makespan, idle, busy, peak) --------------

def _gpipe(p, m, f, b, w, overlap):
    """Any p, m: makespan (m+p-1)t; rank r idles (p-1-r)t; every rank holds m micro-batches."""
    t = f + b + w
    return (m + p - 1) * t, [(p - 1 - r) * t for r in range(p)], [m * t] * p, [m] * p


def _one_f_one_b(p, m, f, b, w, overlap):
    """Any p, m: GPipe's makespan (m+p-1)t and idle (p-1-r)t on rank r; rank r holds min(p-r, m) micro-batches."""
    t = f + b + w
    return (m + p - 1) * t, [(p - 1 - r) * t for r in range(p)], [m * t] * p, [min(p - r, m) for r in range(p)]


def _interleaved(p, m, f, b, w, overlap, v):
    """m a multiple of p, v >= 2 (any f, b, w): makespan (m + (p-1)/v)t, rank r idles (p-1-r)t/v, i.e. bubble ratio
    (p-1)/(vm+p-1).  Rank r keeps 2(p-r-1)+(v-1)p+1 chunks of 1/v alive (capped at vm; all vm when m == p)."""
    _need(m % p == 0, "interleaved", "m divisible by p", p=p, m=m)
    t = f + b + w
    alive = [v * m if m == p else min(2 * (p - r - 1) + (v - 1) * p + 1, v * m) for r in range(p)]
    return (m + (p - 1) / v) * t, [(p - 1 - r) * t / v for r in range(p)], [m * t] * p, [a / v for a in alive]


def _zb_h1(p, m, f, b, w, overlap):
    """m >= p (any F, B, W): rank r idles (p-1-r)d with d = max(F+B-W, B), makespan mt + (p-1)max(F, d), peak p
    on every rank.  With W <= F this is the paper's (p-1)(F+B-W); with W > F the delayed W's can no longer cover
    the wait for the next B and rank 0 idles (p-1)B, more than the published value."""
    _need(m >= p, "zb-h1", "m >= p", p=p, m=m)
    t, d = f + b + w, max(f + b - w, b)
    return m * t + (p - 1) * max(f, d), [(p - 1 - r) * d for r in range(p)], [m * t] * p, [p] * p


def _zb_h2(p, m, f, b, w, overlap):
    """m >= 2p-1 (any F, B, W): rank r idles (p-1-r)d with d = max(0, F+B-2W, B-F), makespan mt + (p-1)max(F, d),
    every rank peaks at 2p-1.  So no idle at all when B <= F and F+B <= 2W (e.g. F = B = W); the paper's
    (p-1)(F+B-2W) when W <= F; and (p-1)(B-F) when B > F, because 2p-1 warm-up forwards then end before the first
    B arrives.  (The order is built for F = B = W; it stays valid for any costs.)"""
    _need(m >= 2 * p - 1, "zb-h2", "m >= 2p-1", p=p, m=m)
    t, d = f + b + w, max(0.0, f + b - 2 * w, b - f)
    return m * t + (p - 1) * max(f, d), [(p - 1 - r) * d for r in range(p)], [m * t] * p, [2 * p - 1] * p


def _zbv(p, m, f, b, w, overlap):
    """m >= 2p and F = B = W: no idle, makespan mt + (p-1)F/2 (its lower bound: the last rank cannot start before
    p-1 half-stage forwards), every rank peaks at p (2p half-stage activations).  Unequal F, B, W leave holes."""
    _need(m >= 2 * p, "zbv", "m >= 2p", p=p, m=m)
    _need(f == b == w, "zbv", "F = B = W", f=f, b=b, w=w)
    t = f + b + w
    return m * t + (p - 1) * f / 2, [0.0] * p, [m * t] * p, [p] * p


def _dualpipe(p, m, f, b, w, overlap):
    """p even, m even >= 2p, F = B = W, overlap 1: with n = p/2, makespan mt + (n-1)F; rank r idles (n-1-h)F with
    h = min(r, p-1-r); every rank peaks at p+1 (two copies, so twice 1F1B's parameters)."""
    _need(p % 2 == 0 and m % 2 == 0 and m >= 2 * p, "dualpipe", "an even p and an even m >= 2p", p=p, m=m)
    _need(f == b == w and overlap == 1, "dualpipe", "F = B = W and overlap = 1", f=f, b=b, w=w, overlap=overlap)
    n, t = p // 2, f + b + w
    idle = [(n - 1 - min(r, p - 1 - r)) * f for r in range(p)]
    return m * t + (n - 1) * f, idle, [m * t] * p, [p + 1] * p


def _dualpipev(p, m, f, b, w, overlap):
    """m >= 2p, F = B = W, overlap 1: makespan mt + (p-1)F/2, rank r idles (p-1-r)F/2, every rank peaks at p + 1/2
    (2p+1 half-stage activations: DeepSeek's PP+1 with PP = 2p chunks)."""
    _need(m >= 2 * p, "dualpipev", "m >= 2p", p=p, m=m)
    _need(f == b == w and overlap == 1, "dualpipev", "F = B = W and overlap = 1", f=f, b=b, w=w, overlap=overlap)
    t = f + b + w
    return m * t + (p - 1) * f / 2, [(p - 1 - r) * f / 2 for r in range(p)], [m * t] * p, [p + 0.5] * p


_FORMS: dict[str, Callable] = {
    "gpipe": _gpipe, "1f1b": _one_f_one_b, "interleaved": _interleaved, "zb-h1": _zb_h1, "zb-h2": _zb_h2,
    "zbv": _zbv, "dualpipe": _dualpipe, "dualpipev": _dualpipev,
}


# ---- published formulas -------------------------------------------------------------------------------------

def published_bubble(schedule: str, p: int, costs: Costs | None = None) -> float:
    """A rank's bubble (makespan - busy) as published, translated to this course's costs.

    - 1F1B: (p-1)(F+B), B the full backward b + w.
    - ZB-H1 (DeepSeek's "ZB1P"): (p-1)(F+B-2W) with B full, i.e. (p-1)(f+b-w) (the zero-bubble paper's form).
      The simulator agrees when W <= F; with W > F it finds (p-1)B (see ``predict("zb-h1", ...)``).
    - ZB-H2: (p-1)(F+B-2W) in the zero-bubble paper's notation (B the input gradient); it means no bubble when
      F + B <= 2W.  Clamped at 0.  The simulator agrees on rank 0 when B <= F; with B > F it finds (p-1)(B-F).
    - DualPipe: (PP/2-1)(F&B+B-3W) with PP = p, F&B the overlapped pair = overlap(f+b) + w (a forward chunk with a
      full backward chunk), B = b + w, W = w.  DualPipeV: the same row with PP = 2p chunks of half a stage.

    Where it disagrees with ``simulate``: DualPipe with W > 0.  The formula equals the simulation exactly when
    W = 0 and F = B, for any p and overlap, DualPipe and DualPipeV alike (tests/test_formulas.py).  With W > 0 the
    simulator finds less bubble, e.g. F = B = W: (PP/2-1)F instead of 2(PP/2-1)F.  The order is the same; the
    difference is when dX leaves a rank.  In the course's plans B (input gradient) and W are separate ops, so dX is
    sent as soon as B ends and W runs afterwards.  DeepSeek's code runs a backward that is not deferred (the one
    inside F&B, and those of its steps 5-6) as one chunk and sends dX only after dW too, so every hop of the
    backward chain in the warm-up and drain carries W as well.  With W = 0 the two rules coincide, hence the exact
    match.  Re-timing the same order with ``course.replay.whole_backward`` (chapter 6): making only the backward
    inside each F&B pair one block reproduces the published value at F = B = W, and at W = 0; at other W no
    rule reproduces it, and DeepSeek's full code path (every backward that does not defer its W as one block)
    gives more bubble than published (8 instead of 6 at p = 8, m = 20, F = B = W).  When F != B the formula is
    off under either rule: it was derived for the equal-length cells of the paper's figure.
    """
    costs = costs or Costs()
    f, b, w, _ = _uniform(costs)
    if schedule in ("1f1b", "gpipe"):
        return (p - 1) * (f + b + w)
    if schedule == "zb-h1":
        return (p - 1) * (f + (b + w) - 2 * w)
    if schedule == "zb-h2":
        return max(0.0, (p - 1) * (f + b - 2 * w))
    if schedule in ("dualpipe", "dualpipev"):
        half, scale = (p // 2, 1.0) if schedule == "dualpipe" else (p, 0.5)
        fb = (costs.overlap * (f + b) + w) * scale
        return (half - 1) * (fb + (b + w) * scale - 3 * w * scale)
    raise ValueError(f"no published bubble for {schedule!r}; known: 1f1b, gpipe, zb-h1, zb-h2, dualpipe, dualpipev")


def parameters_per_rank(plan: Plan) -> list[float]:
    """The share of one model copy each rank holds, in units of 1/p (1F1B: 1 each; DualPipe: 2 each)."""
    return [len(stages) * plan.p / plan.chunks for stages in plan.placement]


def dualpipe_table(p: int, m: int, costs: Costs | None = None) -> list[dict]:
    """DeepSeek-V3's table (bubble, parameters, activations), published next to simulated, for 1F1B, ZB1P (= ZB-H1),
    DualPipe and DualPipeV on p ranks with m micro-batches.

    Simulated bubble = max over ranks of makespan - busy; parameters in 1F1B's per-rank share; activations = max
    peak, in micro-batch activations of one rank's share.  DualPipeV's "published" row is DualPipe's read with
    PP = 2p chunks of half a stage: 2 chunks = 1x 1F1B's parameters, PP+1 chunks = p + 1/2 activations.
    """
    costs = costs or Costs()
    published_act = {"1f1b": p, "zb-h1": p, "dualpipe": p + 1, "dualpipev": p + 0.5}
    published_params = {"1f1b": 1, "zb-h1": 1, "dualpipe": 2, "dualpipev": 1}
    rows = []
    for name, label in (("1f1b", "1F1B"), ("zb-h1", "ZB1P"), ("dualpipe", "DualPipe"), ("dualpipev", "DualPipeV")):
        plan = build(name, p, m)
        tl = simulate(plan, costs)
        rows.append({
            "method": label, "schedule": name,
            "bubble_published": published_bubble(name, p, costs),
            "bubble_simulated": max(tl.makespan - x for x in tl.busy),
            "parameters_published": published_params[name],
            "parameters_simulated": max(parameters_per_rank(plan)),
            "activations_published": published_act[name] * _uniform(costs)[3],
            "activations_simulated": max(tl.peak_activations),
        })
    return rows
