"""GPipe and 1F1B: one stage per rank, full backward."""

from __future__ import annotations

from ..plan import Op, Plan
from .registry import register


@register("gpipe", summary="all forwards, then all backwards; every stage holds m micro-batches")
def gpipe(p: int, m: int) -> Plan:
    ranks = [[Op("F", i, s) for i in range(m)] + [Op("B", i, s) for i in range(m)] for s in range(p)]
    return Plan(ranks, m, name="gpipe")


@register("1f1b", summary="warm up with p-s-1 forwards, then one forward one backward; stage s holds <= p-s")
def one_f_one_b(p: int, m: int) -> Plan:
    """1F1B: rank r warms up with p-r-1 forwards, then runs the next forward (while there is one) and the oldest
    backward, in turn.  (ZB-H1, in zero_bubble.py, is this loop with the W ops added.)"""
    ranks = []
    for r in range(p):
        warm = min(p - r - 1, m)
        order = [Op("F", i, r) for i in range(warm)]
        for i in range(m):
            if warm + i < m:
                order.append(Op("F", warm + i, r))
            order.append(Op("B", i, r))
        ranks.append(order)
    return Plan(ranks, m, name="1f1b")
