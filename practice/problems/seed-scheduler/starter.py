"""Exercise seed-scheduler (chapter 2): the seed blog's 1F1B scheduler, tested with the simulator and fixed.

The artefact under test is ``seed_schedule`` in ``course/seed_scheduler.py``: read it before you start.
"""

import math

from course.seed_scheduler import seed_order, seed_schedule


def _check(p, m, mb_costs):
    for name, value in (("p", p), ("m", m)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if type(mb_costs) not in (list, tuple) or len(mb_costs) != m:
        raise ValueError(f"mb_costs must be a list of m = {m} numbers, got {mb_costs!r}")
    for x in mb_costs:
        if type(x) not in (int, float) or not math.isfinite(x) or x < 0:
            raise ValueError(f"mb_costs must hold finite non-negative numbers, got {x!r}")


def dropped_ops(p, m, mb_costs):
    """The operations of a complete iteration that the seed's list leaves out, in ascending micro-batch order."""
    raise NotImplementedError  # TODO: your code here


def failing_case():
    """A completed seed plan (the blog's list on every stage, the dropped ops put back) slower than 1F1B."""
    raise NotImplementedError  # TODO: your code here


def fixed_schedule(p, m, mb_costs):
    """The scheduler fixed: one order per stage, forwards in the blog's order, no more memory than 1F1B's."""
    raise NotImplementedError  # TODO: your code here
