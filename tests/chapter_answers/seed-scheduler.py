"""Chapter 2's printed code as an answer to seed-scheduler.

Chapter 2 never prints the seed's scheduler; what a learner can paste from it is the 1F1B rule of cell `warm-up`
(stage s runs min(m, p-s-1) warm-up forwards) for the fix, the chapter's P = 4, M = 8 for a case, and the
chapter's claim that `validate()` catches missing ops (cell `plan-read`): the seed's list is taken as complete.
"""
from course.seed_scheduler import seed_order, seed_schedule


def dropped_ops(p, m, mb_costs):
    if type(p) is not int or type(m) is not int or p < 1 or m < 1 or type(mb_costs) is not list \
            or len(mb_costs) != m or any(type(x) not in (int, float) or x != x or x < 0 for x in mb_costs):
        raise ValueError("bad arguments")
    return []


def failing_case():
    p, m, costs = 4, 8, [1.0] * 8
    steps = [f"{'F' if kind == 'forward' else 'B'}{mb}" for kind, mb in seed_schedule(m, p, costs)]
    return {"p": p, "m": m, "mb_costs": costs, "plan": [steps for _ in range(p)]}


def fixed_schedule(p, m, mb_costs):
    dropped_ops(p, m, mb_costs)
    order = seed_order(m, mb_costs)
    orders = []
    for s in range(p):
        warm = min(p - s - 1, m)
        ops = [f"F{mb}" for mb in order[:warm]]
        for i in range(m - warm):
            ops += [f"F{order[warm + i]}", f"B{order[i]}"]
        ops += [f"B{mb}" for mb in order[m - warm:]]
        orders.append(ops)
    return orders
