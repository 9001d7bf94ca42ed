"""Controllable-memory V schedules (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory").

A schedule is one *building block* repeated: the ops of a single micro-batch, placed in time, copied every T
slots for the next micro-batch.  On a V placement (rank r holds stages r and 2p-1-r, so a micro-batch goes down
the ranks on chunk 0 and back up on chunk 1) every rank runs 6 ops per micro-batch (F, B and W on two chunks),
so with one slot per op the period is T = 6.  A rank's activation memory is then the time its micro-batches
stay alive divided by T: the *lifespan* of the block on that rank.  The offsets between consecutive ops of the
block set the lifespan, hence the memory: the paper's point is that memory is a knob, not a given.

Here a block is built from three offsets, in slots: ``df`` between a micro-batch's forward on one stage and on
the next, ``db`` between its backwards, ``dw`` from a B to its W.  The V makes every rank's two lifespans add
up to about (2p-1)(df + db), the same on every rank.  Ops are placed one after another along the micro-batch's
path; one that would share its rank's slot (mod T) with an op already placed moves to the next free slot, so
the repeated block never collides.  Each rank's order is its ops sorted by slot over all copies of the block,
and the simulator then runs them as soon as possible.

- ``v-min``:  df = db = 1, dw = 0: the shortest block; memory about 1/3 of 1F1B's.
- ``v-half``: df alternating 2, 1 and db = 1: memory about 1/2 of 1F1B's, idle about half of 1F1B's.
- ``v-zb``:   df = 3, db = 2: 1F1B's memory, and a third of 1F1B's idle (the hand-made ``zbv`` spends the same
  memory on more warm-up forwards and reaches zero idle when F = B = W).

What each one achieves, measured by simulation over a sweep, is checked in tests/test_search_schedules.py:
the memory fractions depend on the order only, so they hold for any costs; the idle fractions assume the
paper's F = B = W.
"""

from __future__ import annotations

from typing import Sequence

from ..plan import Op, Plan
from .registry import register

PERIOD = 6   # slots per micro-batch on each rank: F, B, W on two chunks


def building_block(p: int, df: Sequence[int], db: Sequence[int], dw: int) -> dict[tuple[str, int], int]:
    """Slot of each op (kind, stage) of one micro-batch; no two ops of a rank share a slot modulo PERIOD.

    ``df[k % len(df)]`` separates the forwards on stages k-1 and k, ``db[k % len(db)]`` the backwards on
    stages k+1 and k; a W follows its B after ``dw`` free slots."""
    stages = 2 * p
    used = [set() for _ in range(p)]
    slot: dict[tuple[str, int], int] = {}

    def place(kind: str, stage: int, earliest: int) -> int:
        rank = v_rank(p, stage)
        t = earliest
        while t % PERIOD in used[rank]:
            t += 1
        used[rank].add(t % PERIOD)
        slot[kind, stage] = t
        return t

    t = place("F", 0, 0)
    for k in range(1, stages):
        t = place("F", k, t + df[k % len(df)])
    t = place("B", stages - 1, t + 1)
    for k in range(stages - 2, -1, -1):
        t = place("B", k, t + db[k % len(db)])
    for k in range(stages):
        place("W", k, slot["B", k] + 1 + dw)
    return slot


def v_rank(p: int, stage: int) -> int:
    """The rank holding ``stage`` in the V placement."""
    return stage if stage < p else 2 * p - 1 - stage


def repeat_block(p: int, m: int, slot: dict[tuple[str, int], int], name: str) -> Plan:
    """The plan that runs the block for micro-batches 0..m-1, copy i shifted by i x PERIOD slots."""
    timed: list[list[tuple[int, Op]]] = [[] for _ in range(p)]
    for i in range(m):
        for (kind, stage), t in slot.items():
            timed[v_rank(p, stage)].append((t + i * PERIOD, Op(kind, i, stage)))
    ranks = [[op for _, op in sorted(ops, key=lambda x: x[0])] for ops in timed]
    return Plan(ranks, m, placement=[[r, 2 * p - 1 - r] for r in range(p)], name=name)


@register("v-min", summary="V placement, building block with offsets 1: activation memory ~1/3 of 1F1B's")
def v_min(p: int, m: int) -> Plan:
    """V-Min: the tightest block (forward and backward offsets 1, W right after B)."""
    return repeat_block(p, m, building_block(p, (1,), (1,), 0), "v-min")


@register("v-half", summary="V placement, building block with forward offsets 2,1: memory ~1/2 of 1F1B's")
def v_half(p: int, m: int) -> Plan:
    """V-Half: forward offsets alternating 2 and 1, backward offsets 1."""
    return repeat_block(p, m, building_block(p, (2, 1), (1,), 0), "v-half")


@register("v-zb", summary="V placement, building block with offsets 3 and 2: 1F1B's memory, 1/3 of its idle")
def v_zb(p: int, m: int) -> Plan:
    """V-ZB: forward offsets 3, backward offsets 2: the block that spends 1F1B's memory."""
    return repeat_block(p, m, building_block(p, (3,), (2,), 0), "v-zb")
