"""DualPipe and DualPipeV (DeepSeek-V3, 2024): bidirectional pipelines with overlapped forward-and-backward steps.

Both run the same eight-phase order per rank; they differ in where the micro-batches come from.

- ``dualpipe``: two copies of the model.  Half of the micro-batches (0..m/2-1) enter at rank 0 and run route A
  (stages 0..p-1, stage r on rank r); the other half enter at rank p-1 and run route B (stages p..2p-1, the k-th
  on rank p-1-k).  Rank r holds stage r of copy A and stage 2p-1-r of copy B: twice the parameters of 1F1B.
  Needs an even p and an even m >= 2p.
- ``dualpipev``: one copy folded into a V (rank r holds stages r and 2p-1-r of a 2p-stage route, like ZB-V);
  every micro-batch enters at rank 0 and leaves there.  Rank r runs the order of DualPipe's rank r on 2p ranks
  (chunk 0 = stage r, chunk 1 = stage 2p-1-r, m micro-batches per chunk).  Needs m >= 2p.

In the steady phase a rank runs ``F&B`` steps: the forward of one direction (chunk) overlapped with the
backward of the other, lasting ``Costs.overlap x (F + B)`` (B the input gradient; its W follows at once).
The warm-up and cool-down use the B/W split so that deferred W's fill the holes.  A rank's two chunks are its
"phase 0" (the one that receives fresh micro-batches first) and "phase 1".
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from ..plan import Op, Overlap, Plan
from .registry import register


class Item(NamedTuple):
    """One item of a rank's abstract order (see dualpipe_phases)."""

    kind: str                 # "F", "B", "W" (the oldest deferred W) or "FB" (a forward overlapped with a backward)
    phase: int = 0            # F, B: the phase (chunk) it runs; FB: the forward's phase (the backward runs the other)
    defer_w: bool = False     # B: its W waits in the queue that a later "W" pops (False: the W follows at once)


def dualpipe_phases(n: int, h: int, c: int):
    """The abstract order of one rank, as Items, in DualPipe's eight phases.

    n ranks per half pipeline, h = this rank's index in its half, c micro-batches per phase.
    """
    turn = h == n - 1                      # the rank where the two directions meet
    for _ in range(2 * (n - h - 1)):       # 1: phase-0 forwards
        yield Item("F", 0)
    for _ in range(h + 1):                 # 2: F0 F1
        yield Item("F", 0)
        yield Item("F", 1)
    for _ in range(n - h - 1):             # 3: B1 (W deferred), W, F1
        yield Item("B", 1, defer_w=True)
        yield Item("W")
        yield Item("F", 1)
    for i in range(c - 2 * n + h + 1):     # 4: main: F0&B1, F1&B0
        if i == 0 and turn:                # the turning rank runs its first pair apart (shorter bubble)
            yield Item("F", 0)
            yield Item("B", 1)
        else:
            yield Item("FB", 0)
        yield Item("FB", 1)
    for _ in range(n - h - 1):             # 5: B1, F1&B0
        yield Item("B", 1)
        yield Item("FB", 1)
    defer = False
    for i in range(h + 1):                 # 6: B1 B0; the second half defers W
        if i == (h + 1) // 2 and h % 2 == 1:
            defer = True
        yield Item("B", 1, defer_w=defer)
        if i == (h + 1) // 2 and h % 2 == 0:
            defer = True
        yield Item("B", 0, defer_w=defer)
    for _ in range(n - h - 1):             # 7: W, B0 (W deferred)
        yield Item("W")
        yield Item("B", 0, defer_w=True)
    for _ in range(h + 1):                 # 8: remaining W's
        yield Item("W")


def _rank_steps(items, stage: tuple[int, int], mb0: tuple[int, int]):
    """Turn abstract items into steps: phase ph runs stage[ph] on micro-batches mb0[ph], mb0[ph]+1, ..."""
    nf, nb = [0, 0], [0, 0]
    queue: deque[Op] = deque()
    steps = []

    def fwd(ph):
        nf[ph] += 1
        return Op("F", mb0[ph] + nf[ph] - 1, stage[ph])

    def bwd(ph):
        nb[ph] += 1
        op = Op("B", mb0[ph] + nb[ph] - 1, stage[ph])
        return op, Op("W", op.mb, op.stage)

    for item in items:
        if item.kind == "F":
            steps.append(fwd(item.phase))
        elif item.kind == "B":
            b, w = bwd(item.phase)
            steps.append(b)
            if item.defer_w:
                queue.append(w)
            else:
                steps.append(w)
        elif item.kind == "W":
            steps.append(queue.popleft())
        else:
            f = fwd(item.phase)
            b, w = bwd(1 - item.phase)
            steps += [Overlap(f, b), w]
    assert not queue, "every deferred W is run"
    return steps


@register("dualpipe", summary="bidirectional, 2 model copies, F&B overlap; needs even p and even m >= 2p")
def dualpipe(p: int, m: int) -> Plan:
    """DualPipe: m/2 micro-batches enter at each end; rank r holds stage r of copy A and stage 2p-1-r of copy B."""
    if p % 2 or m % 2 or m < 2 * p:
        raise ValueError(f"dualpipe needs an even p and an even m >= 2p (got p={p}, m={m}); "
                         f"e.g. p=2, m=4 or p=4, m=8")
    n, c = p // 2, m // 2
    ranks = []
    for r in range(p):
        a, b = (r, 2 * p - 1 - r), (0, c)           # (stage, first micro-batch) of route A and route B
        if r < n:
            stage, mb0 = a, b
        else:                                       # the second half receives route B first
            stage, mb0 = a[::-1], b[::-1]
        ranks.append(_rank_steps(dualpipe_phases(n, min(r, p - 1 - r), c), stage, mb0))
    routes = [list(range(p))] * c + [list(range(p, 2 * p))] * c
    placement = [[r, 2 * p - 1 - r] for r in range(p)]
    return Plan(ranks, m, placement=placement, routes=routes, name="dualpipe")


@register("dualpipev", summary="DualPipe folded into a V: 1 model copy, rank r holds stages r and 2p-1-r; m >= 2p")
def dualpipev(p: int, m: int) -> Plan:
    """DualPipeV: every micro-batch goes down chunk 0 and back up chunk 1 (stages r and 2p-1-r on rank r)."""
    if m < 2 * p:
        raise ValueError(f"dualpipev needs m >= 2p (got p={p}, m={m}); allowed: m >= {2 * p}")
    ranks = [_rank_steps(dualpipe_phases(p, r, m), (r, 2 * p - 1 - r), (0, 0)) for r in range(p)]
    placement = [[r, 2 * p - 1 - r] for r in range(p)]
    return Plan(ranks, m, placement=placement, name="dualpipev")
