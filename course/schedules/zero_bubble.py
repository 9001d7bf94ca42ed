"""Zero-bubble schedules (Qi et al., 2023): backward split into B (input gradient) and W (weight gradient).

Nobody waits for W, so it can fill the holes 1F1B leaves.  Three schedules:

- ``zb-h1``: 1F1B's order and memory (rank r keeps at most p micro-batches alive); rank r delays its first W by
  r steps, so the backward chain reaches rank 0 sooner.  Rank 0's idle drops from (p-1)(F+B+W) to (p-1)(F+B-W)
  (for W <= F; course.formulas has the general form).
- ``zb-h2``: rank r warms up with 2(p-r)-1 forwards (memory up to 2p-1) and ends with 2r+1 deferred W's; with
  F = B = W every rank is busy from its first op to its last.  Built by list scheduling on unit costs: a free
  rank runs a ready B first, else a ready F while fewer than 2p-1 micro-batches are alive, else its oldest W.
- ``zbv``: two chunks per rank in a V (rank r holds stages r and 2p-1-r, so the last rank turns the micro-batch
  around locally); 1F1B's peak memory, and no idle with F = B = W.
"""

from __future__ import annotations

from ..plan import Op, Plan
from .registry import register


@register("zb-h1", summary="1F1B with B/W split, W of rank r delayed by r steps; memory <= p; idle (p-1)(F+B-W)")
def zb_h1(p: int, m: int) -> Plan:
    """ZB-H1: 1F1B's loop (schedules/basic.py) plus W: from rank r's (r+1)-th backward on, each B is followed by
    the oldest pending W, and the W's still pending close the rank."""
    ranks = []
    for r in range(p):
        warm = min(p - r - 1, m)
        order = [Op("F", i, r) for i in range(warm)]
        w_next = 0
        for i in range(m):
            if warm + i < m:
                order.append(Op("F", warm + i, r))
            order.append(Op("B", i, r))
            if i >= r:
                order.append(Op("W", w_next, r))
                w_next += 1
        order += [Op("W", i, r) for i in range(w_next, m)]
        ranks.append(order)
    return Plan(ranks, m, name="zb-h1")


@register("zb-h2", summary="B/W split, 2(p-r)-1 warm-up forwards, W's fill the tail; memory <= 2p-1; no idle if F=B=W")
def zb_h2(p: int, m: int) -> Plan:
    """ZB-H2: list-scheduled on unit costs; B first, then F while < 2p-1 micro-batches are alive, else W."""
    limit = 2 * p - 1
    nf, nb, nw = [0] * p, [0] * p, [0] * p          # next F / B / W micro-batch of each rank
    f_end = [[None] * m for _ in range(p)]          # when F_i (B_i) finished on rank r
    b_end = [[None] * m for _ in range(p)]
    ranks: list[list[Op]] = [[] for _ in range(p)]
    t = 0
    while any(n < m for n in nw):
        for r in range(p):                          # every op lasts 1 unit: pick what rank r runs in [t, t+1)
            i = nb[r]
            if i < m and f_end[r][i] is not None and f_end[r][i] <= t and \
                    (r == p - 1 or (b_end[r + 1][i] is not None and b_end[r + 1][i] <= t)):
                ranks[r].append(Op("B", i, r))
                b_end[r][i] = t + 1
                nb[r] += 1
                continue
            i = nf[r]
            if i < m and nf[r] - nw[r] < limit and (r == 0 or (f_end[r - 1][i] is not None and f_end[r - 1][i] <= t)):
                ranks[r].append(Op("F", i, r))
                f_end[r][i] = t + 1
                nf[r] += 1
                continue
            if nw[r] < nb[r]:
                ranks[r].append(Op("W", nw[r], r))
                nw[r] += 1
        t += 1
        assert t <= 3 * m * p + 2 * p, "zb-h2 list scheduling made no progress"   # some op runs every unit
    return Plan(ranks, m, name="zb-h2")


@register("zbv", summary="V placement (rank r holds stages r and 2p-1-r), B/W split; memory as 1F1B; no idle if F=B=W")
def zbv(p: int, m: int) -> Plan:
    """ZB-V: warm up on chunk 0, fill with chunk-1 forwards, then alternate F-B-W on both chunks."""
    n = max(m, 2 * p)       # build the full V for enough micro-batches, then drop the ones that do not exist
    ranks = []
    for r in range(p):
        s0, s1 = r, 2 * p - 1 - r
        order: list[Op] = []
        placed = {(kind, s): 0 for kind in "FBW" for s in (s0, s1)}   # how many of each kind each stage has run

        def add(*kinds_on_stages):          # the next micro-batch's op of each (kind, stage), in turn
            for kind, s in kinds_on_stages:  # (called in this rank's iteration only: its order and counts)
                order.append(Op(kind, placed[kind, s], s))  # noqa: B023
                placed[kind, s] += 1  # noqa: B023

        for _ in range(2 * (p - r) - 1):            # chunk-0 forwards until chunk 1's first input arrives
            add(("F", s0))
        for _ in range(r):                          # chunk-1 forwards interleaved with more chunk-0 forwards
            add(("F", s1), ("F", s0))
        for _ in range(p - r):                      # chunk 1 reaches steady state: F, B, W
            add(("F", s1), ("B", s1), ("W", s1))
        while placed["F", s1] < n or placed["F", s0] < n:   # steady: F-B-W on chunk 0, then on chunk 1
            if placed["F", s0] < n:
                add(("F", s0))
            add(("B", s0), ("W", s0), ("F", s1), ("B", s1), ("W", s1))
        for _ in range(r):                          # drain: B's first, W's deferred to fill the tail
            add(("B", s0), ("B", s1))
        while placed["B", s0] < n:
            add(("B", s0), ("W", s0))
        while placed["W", s1] < placed["B", s1]:
            add(("W", s1))
        while placed["W", s0] < placed["B", s0]:
            add(("W", s0))
        ranks.append([op for op in order if op.mb < m])
    placement = [[r, 2 * p - 1 - r] for r in range(p)]
    return Plan(ranks, m, placement=placement, name="zbv")
