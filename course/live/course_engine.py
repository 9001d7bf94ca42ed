"""The course engine: this package's executor (executor.py) runs the plan as written, op for op, on every rank.

With ``emulate`` each step is padded to its modelled duration (``Costs.durations``, 1 cost unit = ``unit_ms``)."""

from __future__ import annotations

from ..plan import Plan
from ..timeline import Span
from .engine import Measured, iteration_times
from .executor import RankJob, plan_worker as worker  # noqa: F401  (the engine's worker)
from .options import LiveOptions


def job(plan: Plan, options: LiveOptions) -> RankJob:
    durations = None
    if options.emulate:
        durations = [[d * options.unit_s for d in row] for row in options.costs.durations(plan)]
    return RankJob(plan, options, durations)


def measured(plan: Plan, job: RankJob, results: list[dict]) -> Measured:
    """Spans in the plan's own order; gradients of the copies of one chunk (DualPipe's two directions) summed."""
    spans = [[Span(r, s, e, plan.ranks[r][i]) for s, e, i in res["spans"]] for r, res in enumerate(results)]
    chunk_of = plan.chunk_of_stage()
    grads: dict[int, list] = {}
    for res in results:
        for stage, gs in res["grads"].items():
            k = chunk_of[stage]
            grads[k] = gs if k not in grads else [a + b for a, b in zip(grads[k], gs)]
    losses = {i: v for res in results for i, v in res["losses"].items()}
    saved = {"saved_bytes": [res["saved_bytes"] for res in results],            # per rank [(seconds, bytes)]
             "measured_peak_activation_bytes": [res["peak_saved_bytes"] for res in results]}
    return Measured(plan, spans, grads, [losses[i] for i in sorted(losses)], iteration_times(results), saved)
