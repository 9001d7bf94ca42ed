"""Interleaved 1F1B (Megatron-LM's virtual pipeline): v model chunks per rank.

Rank r holds stages r, r+p, ..., r+(v-1)p of a route through all v*p stages, so a micro-batch visits every
rank v times.  Each chunk is 1/v of a rank's share, which divides the warm-up and cool-down bubble by v at
the price of v times more point-to-point transfers.

Megatron's order: forwards go in groups of p micro-batches per chunk (micro-batches 0..p-1 through chunk 0,
then the same p through chunk 1, ..., then the next p), backwards the same way with chunks reversed.  Rank r
warms up with 2(p-r-1) + (v-1)p forwards (all of them when m == p), then alternates one forward and one
backward, then drains.  Grouping by p is why m must be a multiple of p.
"""

from __future__ import annotations

from ..plan import Op, Plan
from . import register


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
                         f"allowed: m = {p}, {2 * p}, {3 * p}, ...")
    total = v * m
    # The k-th forward (backward) of every rank: micro-batch and chunk, the same list for all ranks.
    mbs = [(k // (p * v)) * p + k % p for k in range(total)]
    chunks = [(k // p) % v for k in range(total)]
    ranks = []
    for r in range(p):
        warm = total if m == p else min(2 * (p - r - 1) + (v - 1) * p, total)
        fwd = [Op("F", i, c * p + r) for i, c in zip(mbs, chunks)]
        bwd = [Op("B", i, (v - 1 - c) * p + r) for i, c in zip(mbs, chunks)]
        steady = [op for pair in zip(fwd[warm:], bwd) for op in pair]   # one forward, one backward
        ranks.append(fwd[:warm] + steady + bwd[total - warm:])
    placement = [[c * p + r for c in range(v)] for r in range(p)]
    return Plan(ranks, m, placement=placement, name="interleaved", meta={"v": v})
