"""GPipe and 1F1B: one stage per rank, full backward."""

from __future__ import annotations

from itertools import repeat

from ..plan import Op, Plan, make_ops
from .registry import register


@register("gpipe", summary="all forwards, then all backwards; every stage holds m micro-batches")
def gpipe(p: int, m: int) -> Plan:
    ranks = [[Op("F", i, s) for i in range(m)] + [Op("B", i, s) for i in range(m)] for s in range(p)]
    return Plan(ranks, m, name="gpipe")


def one_f_one_b_order(p: int, m: int, s: int) -> list[tuple[str, int]]:
    """Stage s of 1F1B: min(p-s-1, m) warm-up forwards, then alternate one forward and one backward, then drain."""
    warm = min(p - s - 1, m)
    order = [("F", i) for i in range(warm)]
    for i in range(m - warm):
        order += [("F", warm + i), ("B", i)]
    order += [("B", i) for i in range(m - warm, m)]
    return order


@register("1f1b", summary="warm up with p-s-1 forwards, then one forward one backward; stage s holds <= p-s")
def one_f_one_b(p: int, m: int) -> Plan:
    ranks = [make_ops(*zip(*one_f_one_b_order(p, m, s)), repeat(s)) for s in range(p)]
    return Plan(ranks, m, name="1f1b")
