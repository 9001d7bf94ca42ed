"""Chapter 7's printed material as an answer to greedy-partition-bug.

``empty_stage_case`` is the model of cell ``task-lm-head`` at the lm_head value its reveal prints (5.0, p = 4),
where the greedy leaves the last stage empty.  ``slow_step_case`` is the model of cells ``layers`` and ``cuts``
(lm_head 2.5, p = 4), where the greedy fills all four stages and 1F1B takes only 1.13 times as long as with the
exact cut.  ``fixed_partition`` is the exact cut as cells ``three-cuts`` and ``comm`` compute it, with
``course.partition``.
"""

from course.partition import partition

KINDS = ["embedding"] + ["dense", "moe"] * 7 + ["lm_head"]
BASE_COST = {"embedding": 0.6, "dense": 1.0, "moe": 1.8, "lm_head": 2.5}


def seed_partition(layer_times, num_stages):
    return [s for s in partition(layer_times, num_stages, "greedy").stages if s]


def empty_stage_case():
    return [5.0 if k == "lm_head" else BASE_COST[k] for k in KINDS], 4


def slow_step_case():
    return [BASE_COST[k] for k in KINDS], 4


def fixed_partition(layer_times, p, comm=0.0):
    return partition(layer_times, p, comm=comm).stages
