"""GPipe and 1F1B: one stage per rank, full backward."""

from __future__ import annotations

from itertools import chain, repeat

from ..plan import Op, Plan, make_ops
from .registry import register


@register("gpipe", summary="all forwards, then all backwards; every stage holds m micro-batches")
def gpipe(p: int, m: int) -> Plan:
    ranks = [[Op("F", i, s) for i in range(m)] + [Op("B", i, s) for i in range(m)] for s in range(p)]
    return Plan(ranks, m, name="gpipe")


@register("1f1b", summary="warm up with p-s-1 forwards, then one forward one backward; stage s holds <= p-s")
def one_f_one_b(p: int, m: int) -> Plan:
    ranks = []
    for s in range(p):       # stage s: `warm` forwards, then alternately F warm+i and B i, then the last backwards
        warm = min(p - s - 1, m)
        kinds = "F" * warm + "FB" * (m - warm) + "B" * warm
        mbs = chain(range(warm), chain.from_iterable(zip(range(warm, m), range(m - warm))), range(m - warm, m))
        ranks.append(make_ops(kinds, mbs, repeat(s)))
    return Plan(ranks, m, name="1f1b")
