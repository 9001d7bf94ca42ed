"""Controllable-memory V schedules (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory").

A schedule is one *building block* repeated: the ops of a single micro-batch, placed in time, copied every T
slots for the next micro-batch.  On a V placement (rank r holds stages r and 2p-1-r, so a micro-batch goes down
the ranks on chunk 0 and back up on chunk 1) every rank runs 6 ops per micro-batch (F, B and W on two chunks),
so with one slot per op the period is T = 6.  A rank's activation memory is then the time its micro-batches
stay alive divided by T: the *lifespan* of the block on that rank.  The offsets between consecutive ops of the
block set the lifespan, hence the memory: the paper's point is that memory is a knob, not a given.

Here a block is built from offsets, in slots: ``df`` between a micro-batch's forward on one stage and on the
next, ``db`` between its backwards, ``dw`` from a B to its W.  Ops are placed one after another along the
micro-batch's path; one that would share its rank's slot (mod T) with an op already placed moves to the next
free slot, so the repeated block never collides.  Each rank's order is its ops sorted by slot over all copies
of the block, and the simulator then runs them as soon as possible (the paper's *squeezing*).  Repeated, any
such block has no bubble in its steady state; what idles is the warm-up and the cool-down.

- ``v-min``:  df = db = 1, dw = 0: the shortest block; memory about 1/3 of 1F1B's.
- ``v-half``: df alternating 2, 1 and db = 1: memory about 1/2 of 1F1B's, idle about half of 1F1B's.
- ``v-zb``:   offsets 4 along the first leg of each pass (chunk 0 going down, chunk 1 coming back), 3 at the
  turn on rank p-1, 2 along the second leg; W right after its B.  Every rank's two lifespans add up to
  12p slots, 2p chunk activations: exactly 1F1B's p micro-batches of a full stage, on every rank.  (Its steady
  state is the one the hand-made ``zbv`` reaches.)  Repeated as it is, the block still idles p-1-r times a
  full stage's F on rank r, at the two ends, so ``v-zb`` then applies the paper's optional *reordering*
  (``reorder_ends``): memory is under-used in the warm-up and the cool-down, so a rank with nothing to run
  pulls in a later forward while it stays under the block's own peak, and once its forwards are done it runs
  B's before W's, leaving the W's to fill the drain.  With F = B = W that leaves no idle inside any rank's
  window once m >= 2p-1 (rank 0 needs 2p-1 forwards before the first micro-batch comes back), at 1F1B's peak.
  ``v-min`` and ``v-half`` are their blocks repeated, not reordered: under their tighter peaks this greedy
  rule runs out of ops to start (a rank full of forwards waits for a backward that needs one more forward).

What each one achieves, measured by simulation over a sweep, is checked in tests/test_search_schedules.py:
the memory fractions depend on the order only, so they hold for any costs; the idle fractions assume the
paper's F = B = W.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, chain

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


def v_offsets(p: int, first: int, turn: int, second: int) -> tuple[list[int], list[int]]:
    """Per-stage ``df`` and ``db`` of a V block: offset ``first`` along the first leg of each pass, ``turn`` where
    it turns on rank p-1, ``second`` along the second leg (the forward's first leg is chunk 0, the backward's
    chunk 1)."""
    legs = [first] * (p - 1) + [turn] + [second] * (p - 1)
    return [0] + legs, legs[::-1] + [0]        # df[k]: F on k-1 -> k; db[k]: B on k+1 -> k


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


def reorder_ends(plan: Plan) -> Plan:
    """The paper's optional reordering of the warm-up and the cool-down, list-scheduled on unit costs.

    Each rank runs the first op of its block order that is ready, so the steady state, where the next op is
    always ready, stays the block's.  A forward may run ahead of the order while the rank's live activations
    (F to W) stay within the most the block's order ever holds on that rank; once a rank has no forward left,
    its ready B's go before its W's."""
    p, stages = plan.p, 2 * plan.p
    pending = [list(order) for order in plan.ranks]
    cap = [max(accumulate((op.kind == "F") - (op.kind == "W") for op in order), default=0) for order in pending]
    live = [0] * p
    forwards_left = [sum(op.kind == "F" for op in order) for order in pending]
    next_mb: dict[tuple[str, int], int] = {}      # (kind, stage) -> the micro-batch it runs next: FIFO per stage
    done: dict[tuple[str, int, int], int] = {}    # (kind, mb, stage) -> the unit step it ended
    ranks: list[list[Op]] = [[] for _ in range(p)]

    def ready(op: Op, t: int) -> bool:
        kind, i, s = op
        if next_mb.get((kind, s), 0) != i:
            return False
        needs = {"F": [("F", i, s - 1)] if s > 0 else [],
                 "B": [("F", i, s)] + ([("B", i, s + 1)] if s < stages - 1 else []),
                 "W": [("B", i, s)]}[kind]
        return all(done.get(d, t + 1) <= t for d in needs)

    t = 0
    while any(pending):
        chosen = []
        for r in range(p):
            order = enumerate(pending[r])                           # lazily: in the steady state op 0 is ready
            if not forwards_left[r]:                                # B's first, each kind in block order
                order = chain(((j, op) for j, op in enumerate(pending[r]) if op.kind == "B"),
                              ((j, op) for j, op in enumerate(pending[r]) if op.kind != "B"))
            for j, op in order:
                if (op.kind != "F" or live[r] < cap[r]) and ready(op, t):
                    chosen.append((r, j, op))
                    break
        if not chosen:
            raise RuntimeError(f"{plan.name}: reordering found no op to run at step {t}")   # a bug, not bad input
        for r, j, op in chosen:
            del pending[r][j]
            ranks[r].append(op)
            next_mb[op.kind, op.stage] = op.mb + 1
            live[r] += (op.kind == "F") - (op.kind == "W")
            forwards_left[r] -= op.kind == "F"
            done[op] = t + 1
        t += 1
    return Plan(ranks, plan.m, placement=plan.placement, name=plan.name)


V_ZB_OFFSETS = (4, 3, 2)    # first leg, turn, second leg


def block(name: str, p: int) -> dict[tuple[str, int], int]:
    """The building block of ``name`` ("v-min", "v-half" or "v-zb") for p ranks: the slot of each (kind, stage)."""
    offsets = {"v-min": ((1,), (1,)), "v-half": ((2, 1), (1,))}
    if name == "v-zb":
        return building_block(p, *v_offsets(p, *V_ZB_OFFSETS), 0)
    if name not in offsets:
        raise ValueError(f"no building block named {name!r}; known: v-min, v-half, v-zb")
    return building_block(p, *offsets[name], 0)


@register("v-min", summary="V placement, building block with offsets 1: activation memory ~1/3 of 1F1B's")
def v_min(p: int, m: int) -> Plan:
    """V-Min: the tightest block (forward and backward offsets 1, W right after B)."""
    return repeat_block(p, m, block("v-min", p), "v-min")


@register("v-half", summary="V placement, building block with forward offsets 2,1: memory ~1/2 of 1F1B's")
def v_half(p: int, m: int) -> Plan:
    """V-Half: forward offsets alternating 2 and 1, backward offsets 1."""
    return repeat_block(p, m, block("v-half", p), "v-half")


@register("v-zb", summary="V placement, building block with offsets 4, 3, 2, ends reordered: 1F1B's memory, "
                          "no idle if F=B=W and m >= 2p-1")
def v_zb(p: int, m: int) -> Plan:
    """V-ZB: the block with offsets 4 (first leg), 3 (turn), 2 (second leg), its warm-up and cool-down reordered."""
    return reorder_ends(repeat_block(p, m, block("v-zb", p), "v-zb"))
