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
    ### BEGIN SOLUTION
    _check(p, m, mb_costs)
    # The loop visits each of the m micro-batches once, so `step < m` always holds and the cool-down branch
    # never runs: the backwards of the last min(m, p - 1) micro-batches of the order are never scheduled.
    order = sorted(range(m), key=lambda mb: mb_costs[mb], reverse=True)
    never = order[m - min(m, p - 1):]
    return [f"B{mb}" for mb in sorted(never)]
    ### END SOLUTION


def failing_case():
    """A completed seed plan (the blog's list on every stage, the dropped ops put back) slower than 1F1B."""
    ### BEGIN SOLUTION
    p, m, costs = 4, 8, [1.0] * 8
    steps = [f"{'F' if kind == 'forward' else 'B'}{mb}" for kind, mb in seed_schedule(m, p, costs)]
    # The cool-down the blog's comment describes: the remaining backwards at the end, in the blog's order.
    tail = [f"B{mb}" for mb in seed_order(m, costs) if f"B{mb}" not in steps]
    # Every stage runs p - 1 forwards ahead: the last stage runs F_k before B_{k-3}, so each backward waits for
    # a forward to cross every stage first, and the pipeline moves in lock step (69 against 1F1B's 33 here).
    return {"p": p, "m": m, "mb_costs": costs, "plan": [steps + tail for _ in range(p)]}
    ### END SOLUTION


def fixed_schedule(p, m, mb_costs):
    """The scheduler fixed: one order per stage, forwards in the blog's order, no more memory than 1F1B's."""
    ### BEGIN SOLUTION
    _check(p, m, mb_costs)
    order = seed_order(m, mb_costs)
    orders = []
    for s in range(p):
        # 1F1B's warm-up of min(m, p - s - 1) on stage s: only the forwards still on their way down when its first
        # gradient comes back, where the blog gave every stage p - 1.
        warm = min(p - s - 1, m)
        ops = [f"F{mb}" for mb in order[:warm]]
        for i in range(m - warm):
            ops += [f"F{order[warm + i]}", f"B{order[i]}"]
        ops += [f"B{mb}" for mb in order[m - warm:]]
        orders.append(ops)
    return orders
    ### END SOLUTION
