"""Schedule search under a memory cap: the best plan for given costs, and a proof of how good it is.

The problem.  p ranks, rank r holds stage r; m identical micro-batches; backward split into B (input gradient)
and W (weight gradient); per-stage durations F, B, W; ``comm`` between neighbouring ranks.  Memory is counted
as the simulator counts it (``Timeline.peak_activations``): F allocates one micro-batch's activations of its
stage, B frees ``1 - w_mem`` of them, W the remaining ``w_mem``.  A rank runs its ops one after another, so its
memory at any instant depends on its *order* only: the level when the k-th op starts is what the ops before it
allocated minus what they freed.  The cap ``max_activations`` bounds that level on every rank at every instant.
Goal: the order that minimises one iteration's makespan (first start to last end).

Two methods, one answer (``SearchResult``), in one module each beside the problem they share (``problem``: the
inputs, the answer, as-soon-as-possible timing, the lower bound; memory is counted by ``course.costs.memory_change``,
the Timeline's own rule):

- ``heuristic``: the best of several candidates, ranked by their as-soon-as-possible makespan (the simulator's
  rule, computed cheaply here; tests check both agree): list scheduling in several variants (how eagerly
  forwards fill memory, whether a forward may delay a backward that is about to arrive, when W's fill gaps),
  the Zero Bubble paper's automatic scheduler in its eight variants (``zb_auto``) and the hand-made ZB-H1 and
  ZB-H2 where they fit, so never longer than any of them.  The best is simulated by the course simulator; then
  local moves on the critical path (swap an op with the W or F in front of it, defer that W into the next gap,
  ...) are tried, and kept when the simulator confirms them shorter and the rank stays under the cap.  It comes
  with ``lower_bound``, a bound proven from the costs alone; the plan is claimed optimal only when it meets it.
- ``exact``: CP-SAT (OR-Tools) with an interval per op, no-overlap per rank, a reservoir constraint per rank for
  memory, warm-started from the heuristic's plan (hints).  Proves optimality or returns the best plan found and
  the solver's bound.

Why each kind may run in micro-batch order on every rank (the exact model assumes it, so its proofs hold for
all plans): micro-batches are identical, so given any valid schedule, re-label on every rank the k-th F (B, W)
it runs as micro-batch k.  Its inputs arrive in time because, from rank 0 onward for F and from the last rank
back for B, the k-th earliest arrival is never later than the arrival the original labels used for the k-th
execution; memory counts ops, not labels.  Non-identical micro-batches (``mb_scale``) are not supported.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ..costs import Costs
from .exact import DEFAULT_WORKERS, EXACT_AVAILABLE, EXACT_MAX_OPS_WITHOUT_LIMIT, NO_EXACT, ExactUnavailable, exact
from .heuristic import VARIANTS, Variant, heuristic, list_schedule
from .problem import (
    EPS,
    Problem,
    SearchResult,
    asap_ends,
    asap_makespan,
    evaluate,
    lower_bound,
    make_plan,
    peak_levels,
    within_cap,
)


def search(p: int, m: int, costs: Costs | None = None, max_activations: float | Sequence[float] | None = None,
           exact_method: bool = False, time_limit: float | None = None, workers: int = DEFAULT_WORKERS,
           seed: int = 0) -> SearchResult:
    """The best plan found for ``p`` ranks and ``m`` micro-batches under ``costs`` with at most
    ``max_activations`` micro-batch activations alive per rank; the exact method when ``exact_method``.

    Without OR-Tools the exact method says so in one warning line and the heuristic's result comes back (its
    ``method`` is ``"heuristic"``, ``details["exact_unavailable"]`` holds the reason, ``lower_bound`` is proven)."""
    problem = Problem.make(p, m, costs, max_activations)
    if exact_method and not EXACT_AVAILABLE:
        warnings.warn(NO_EXACT, stacklevel=2)
        result = heuristic(problem)
        result.details["exact_unavailable"] = NO_EXACT
        return result
    return exact(problem, time_limit, workers, seed=seed) if exact_method else heuristic(problem)


__all__ = ["EXACT_AVAILABLE", "ExactUnavailable", "EPS", "EXACT_MAX_OPS_WITHOUT_LIMIT", "DEFAULT_WORKERS", "Problem",
           "SearchResult", "Variant", "VARIANTS",
           "search", "heuristic", "exact", "lower_bound", "list_schedule", "asap_makespan", "asap_ends", "peak_levels",
           "within_cap", "make_plan", "evaluate"]
