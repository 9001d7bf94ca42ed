"""What an engine is.  Each engine is one module with three functions, and the runner looks no further:

    job(plan, options) -> job                 checked in the parent; picklable, sent to every worker
    worker(rank, world_size, job) -> dict     the launcher target (top level: workers import it by name)
    measured(plan, job, results) -> Measured  every rank's dict -> what ran, when, and its gradients

The engines: ``course_engine`` (this package's executor runs the plan op for op), ``torch_engine`` (the torch
schedule class of the plan's schedule orders the ops itself) and ``torch_runtime`` (torch's
``_PipelineScheduleRuntime`` runs the plan's CSV).  The runner (runner.py) validates and simulates the plan, launches
``worker`` on ``plan.p`` processes (or under torchrun), and finishes once for all of them: the gradient check, the
measured Timeline and the LiveResult.
"""

from __future__ import annotations

from typing import NamedTuple

from ..plan import Plan
from ..timeline import Span


class Measured(NamedTuple):
    plan: Plan                    # what ran: the plan itself, or the order torch chose, as a Plan
    spans: list[list[Span]]       # per rank, in the order run; seconds from the common start
    grads: dict[int, list]        # model chunk -> its parameter gradients (copies of one chunk summed)
    losses: list[float]           # per micro-batch
    iteration_times: list[float]  # each iteration's makespan in seconds
    meta: dict                    # engine-specific facts (e.g. the torch schedule class)


def iteration_times(results: list[dict]) -> list[float]:
    """Each iteration's makespan from every rank's ``times`` [(first start, last end)]: latest end minus earliest
    start over ranks (each iteration has its own time origin)."""
    per_rank = [res["times"] for res in results]
    return [max(t[i][1] for t in per_rank) - min(t[i][0] for t in per_rank) for i in range(len(per_rank[0]))]
