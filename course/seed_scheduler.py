"""The seed blog's "simplified 1F1B scheduler", reproduced for the exercise ``seed-scheduler``.

The blog (the PipeSwift post among the course's seed material) sorts the micro-batches heaviest first and builds
one list of ``("forward", mb)`` / ``("backward", mb)`` steps, which it runs on every stage.  This module writes
the same behaviour in the course's own code, branch for branch, so that a learner can test it with the simulator:
it is the published artefact, not a schedule the course recommends (``course.schedules`` has those).

Standard library only.
"""

from __future__ import annotations


def seed_order(num_micro_batches: int, micro_batch_costs) -> list[int]:
    """The micro-batches in the order the blog sends them: heaviest first (stable for equal costs)."""
    return sorted(range(num_micro_batches), key=lambda mb: micro_batch_costs[mb], reverse=True)


def seed_schedule(num_micro_batches: int, num_stages: int, micro_batch_costs) -> list[tuple[str, int]]:
    """The blog's steps for ``num_micro_batches`` micro-batches on a ``num_stages``-stage pipeline.

    ``micro_batch_costs[mb]`` is the blog's estimate of micro-batch ``mb``'s compute (see :func:`seed_order`).
    """
    order = seed_order(num_micro_batches, micro_batch_costs)
    in_flight = num_stages - 1                  # the blog's warm-up: forwards before the first backward
    steps = []
    for step, mb in enumerate(order):
        if step < in_flight:                    # warm-up: forwards only
            steps.append(("forward", mb))
        elif step < num_micro_batches:          # steady state: one forward, one backward
            steps.append(("forward", mb))
            steps.append(("backward", order[step - in_flight]))
        else:                                   # cool-down: the remaining backwards
            steps.append(("backward", order[step - in_flight]))
    return steps
