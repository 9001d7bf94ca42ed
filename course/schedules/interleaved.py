"""Interleaved 1F1B (Megatron-LM's virtual pipeline): v model chunks per rank.

Rank r holds stages r, r+p, ..., r+(v-1)p of a route through all v*p stages, so a micro-batch visits every
rank v times.  Each chunk is 1/v of a rank's share, which divides the warm-up and cool-down bubble by v at
the price of v times more point-to-point transfers.

Megatron's order: forwards go in groups of p micro-batches per chunk (micro-batches 0..p-1 through chunk 0,
then the same p through chunk 1, ..., then the next p), backwards the same way with chunks reversed.  Rank r
warms up with 2(p-r-1) + (v-1)p forwards (all of them when m == p), then alternates one forward and one
backward, then drains.  Grouping by p is why m must be a multiple of p.

``interleaved-flex`` is the relaxed order of torch's ``ScheduleInterleaved1F1B`` ("flex_pp", after Llama 3):
micro-batches rotate in groups of g = m // rounds with rounds = max(1, m // p), so m only has to be a multiple
of the number of rounds (p=4 takes m=3 or m=10).  Warm-up is (v-1)g + 2(p-r-1), capped at vm.  For m a multiple
of p above p it is Megatron's order op for op; at m == p it does not run every forward first as Megatron does.
"""

from __future__ import annotations

from itertools import repeat

from ..fast import make_ops
from ..plan import Plan
from .registry import register


def check_v(v, name: str) -> None:
    if not isinstance(v, int) or isinstance(v, bool) or v < 2:
        raise ValueError(f"{name} needs an integer v >= 2 chunks per rank (got v={v!r}; v=1 is plain 1f1b)")


@register("interleaved", params=("v",),
          summary="v chunks per rank (rank r holds stages r, r+p, ...); bubble / v; needs m divisible by p")
def interleaved(p: int, m: int, v: int = 2) -> Plan:
    """Megatron's interleaved 1F1B with v chunks per rank; m must be a multiple of p."""
    check_v(v, "interleaved")
    if m % p:
        raise ValueError(f"interleaved needs m divisible by p (got p={p}, m={m}); "
                         f"allowed: m = {p}, {2 * p}, {3 * p}, ... (interleaved-flex relaxes this)")
    warm = [v * m if m == p else min(2 * (p - r - 1) + (v - 1) * p, v * m) for r in range(p)]
    return _rotating(p, m, v, p, warm, "interleaved")


@register("interleaved-flex", params=("v",),
          summary="torch's relaxed interleaved 1F1B: groups of m // max(1, m // p); needs m divisible by the rounds")
def interleaved_flex(p: int, m: int, v: int = 2) -> Plan:
    """torch's ScheduleInterleaved1F1B: interleaved 1F1B whose micro-batch groups need not have p members."""
    check_v(v, "interleaved-flex")
    rounds = max(1, m // p)
    if m % rounds:
        near = [n for n in range(max(1, m - p), m + p + 1) if n % max(1, n // p) == 0]
        raise ValueError(f"interleaved-flex needs m divisible by its number of rounds max(1, m // p) "
                         f"(got p={p}, m={m}: {rounds} rounds); allowed near it: m = {', '.join(map(str, near))}")
    group = m // rounds
    warm = [min((v - 1) * group + 2 * (p - r - 1), v * m) for r in range(p)]
    return _rotating(p, m, v, group, warm, "interleaved-flex")


def _rotating(p: int, m: int, v: int, group: int, warm: list[int], name: str) -> Plan:
    """Micro-batches pass the chunks of a rank in groups of ``group``; rank r warms up with ``warm[r]`` forwards,
    then alternates one forward and one backward, then drains."""
    total = v * m
    # The k-th forward (backward) of every rank: micro-batch and chunk, the same list for all ranks.
    mbs = [(k // (group * v)) * group + k % group for k in range(total)]
    chunks = [(k // group) % v for k in range(total)]
    ranks = []
    for r in range(p):
        fwd = make_ops(repeat("F"), mbs, [c * p + r for c in chunks])
        bwd = make_ops(repeat("B"), mbs, [(v - 1 - c) * p + r for c in chunks])
        steady = [None] * (2 * (total - warm[r]))     # one forward, one backward
        steady[::2], steady[1::2] = fwd[warm[r]:], bwd[:total - warm[r]]
        ranks.append(fwd[:warm[r]] + steady + bwd[total - warm[r]:])
    placement = [[c * p + r for c in range(v)] for r in range(p)]
    return Plan(ranks, m, placement=placement, name=name)
