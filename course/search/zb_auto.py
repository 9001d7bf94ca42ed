"""The Zero Bubble paper's automatic scheduler (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3.1), one
of the search's candidates.

Written for this course from the paper's description and a reading of the authors' implementation
(sail-sg/zero-bubble-pipeline-parallelism, ``manual_order`` in its scheduler); nothing is copied.  The heuristic
builds every rank's order in rounds, one micro-batch per round, and times each op as soon as it is placed: at the
end of its rank's previous op, or when its input arrives (``comm`` after the op it needs ended).  That is the
simulator's rule, so its times are the simulator's.

1. Warm-up.  Every rank runs F0.  Then, from the last rank back, each rank gets as many further forwards as memory
   allows, as long as they end before its first B can start (the B0 coming back from the next rank).  With
   ``allow_bubble_before_first_b`` it stops there and may idle a little before that B; without, it also runs
   the forward that starts before B0's input arrives and ends after it.  The counts are then made strictly
   decreasing from rank to rank (equal only where both ranks run all m; the authors' code also keeps a rank
   that runs all m after one that runs fewer, an order that deadlocks), every rank runs its forwards, and B0
   runs from the last rank to the first.
2. Rounds 1 .. m-1.  Every rank with forwards left runs one F, then every rank from the last to the first runs
   one B.  A rank always stays at least one forward ahead of the next one; when it is two ahead,
   ``prioritize_b`` lets it skip this round's F if running it would not shorten its wait for the next B.
   Before each F or B, W's run: while memory leaves no room for the next F; while one fits in the gap before
   the op's input arrives; and one more in a gap shorter than W when that gap would make this rank's idle
   time so far the largest of all ranks (with ``no_bubble_greedy``, in every such gap).  Rank 0 runs its
   W's once its forwards are done.
3. Each rank runs the W's left.

The paper grid-searches the three binary choices (``ZB_VARIANTS``) and keeps the schedule whose longest rank
(first F start to last W end, ``ZBSchedule.longest_rank``) is shortest: ``paper_choice``.  The search takes all
eight as candidates, ranked by makespan with its own (``heuristic``), so it is never longer than any of them.
"""

from __future__ import annotations

import math
from itertools import product
from typing import NamedTuple

from ..costs import memory_change
from ..plan import Op
from .problem import EPS, Problem


class ZBVariant(NamedTuple):
    """The heuristic's three binary hyperparameters (the names of the authors' code)."""

    allow_bubble_before_first_b: bool   # warm-up: stop before a forward that would delay the first B
    prioritize_b: bool                  # a rank two forwards ahead may skip the round's F
    no_bubble_greedy: bool              # a W fills every gap shorter than W, not only one that would be the worst

    def __str__(self) -> str:
        return "zb-auto(" + ",".join(f"{k}={int(v)}" for k, v in self._asdict().items()) + ")"


ZB_VARIANTS = tuple(ZBVariant(*flags) for flags in product((True, False), repeat=3))   # the paper's grid order


class ZBSchedule(NamedTuple):
    variant: ZBVariant
    orders: list[list[Op]]
    makespan: float             # first start to last end
    longest_rank: float         # the paper's cost: the longest first-F-start-to-last-W-end window of any rank


def zb_auto_schedule(problem: Problem, variant: ZBVariant) -> ZBSchedule:
    """One variant's per-rank orders, each kind in micro-batch order, never above the cap (any cap >= 1: the
    warm-up leaves each rank at most floor(cap) forwards in flight, and every later round runs one F and one B)."""
    p, m, c, cap = problem.p, problem.m, problem.comm, problem.cap
    dur = {"F": problem.f, "B": problem.b, "W": problem.w}
    change = {kind: memory_change(kind, problem.w_mem) for kind in "FBW"}
    done = {kind: [0] * p for kind in "FBW"}                    # ops of each kind each rank has run
    ended = {kind: [[math.inf] * m for _ in range(p)] for kind in "FB"}
    free = [0.0] * p                                            # when each rank's last op ends
    first_start = [0.0] * p
    idle = [0.0] * p                                            # each rank's idle time since its first F
    level = [0.0] * p
    orders: list[list[Op]] = [[] for _ in range(p)]

    def arrival(kind: str, r: int) -> float | None:
        """When the input of rank r's next op of this kind arrives; None when it needs none from another rank."""
        i = done[kind][r]
        if kind == "F" and r > 0:
            t = ended["F"][r - 1][i]
        elif kind == "B" and r < p - 1:
            t = ended["B"][r + 1][i]
        else:
            return None
        if t == math.inf:
            raise RuntimeError(f"zb-auto placed {kind}{i} on rank {r} before its input")   # a bug, not bad input
        return t + c

    def run(r: int, kind: str) -> None:
        t_in = arrival(kind, r)
        start = free[r] if t_in is None else max(free[r], t_in)
        if done["F"][r]:
            idle[r] += start - free[r]
        else:
            first_start[r] = start
        i = done[kind][r]
        free[r] = start + dur[kind][r]
        if kind != "W":
            ended[kind][r][i] = free[r]
        level[r] += change[kind]
        done[kind][r] = i + 1
        orders[r].append(Op(kind, i, r))

    def w_left(r: int) -> bool:
        return done["W"][r] < done["B"][r]

    def ws_before(r: int, kind: str) -> None:
        """The W's a rank runs before its next F or B: for memory, to fill the gap before the op's input."""
        if kind == "F":
            while level[r] + change["F"] > cap[r] + EPS:
                if not w_left(r):   # cannot happen (see the docstring): a bug, not bad input
                    raise RuntimeError(f"{variant}: no room for a forward on rank {r} under the cap {cap[r]:g}")
                run(r, "W")
        t_in = arrival(kind, r)
        if t_in is None:
            return
        while w_left(r) and free[r] + dur["W"][r] <= t_in + EPS:
            run(r, "W")
        if w_left(r) and free[r] < t_in - EPS:
            worst = t_in - free[r] > max(idle) - idle[r]    # this gap would make the rank the most idle
            if worst or variant.no_bubble_greedy:
                run(r, "W")

    def skips_forward(r: int) -> bool:
        """prioritize_b: rank r, two forwards ahead of rank r+1, skips this round's F if it would not pay."""
        back = free[r + 1] + dur["F"][r + 1] + dur["B"][r + 1] + c     # the earliest B_{r+1} can return
        if free[r] >= back:
            return True
        w_for_memory, lvl, k = 0.0, level[r] + change["F"], 0          # W's the F would need to fit in memory
        while lvl > cap[r] + EPS and done["W"][r] + k < done["B"][r]:
            w_for_memory += dur["W"][r]
            lvl += change["W"]
            k += 1
        if free[r] + dur["F"][r] + w_for_memory <= back:
            return False
        return back - free[r] <= max(idle) - idle[r]

    # 1. Warm-up.
    for r in range(p):
        run(r, "F")
    extra = [0] * p
    b_end = ended["F"][p - 1][0] + dur["B"][p - 1]      # when B0 ends on the rank after the one being filled
    for r in range(p - 2, -1, -1):
        lvl, t = level[r], free[r]
        while done["F"][r] + extra[r] < m and lvl + change["F"] <= cap[r] + EPS:
            if (t + dur["F"][r] > b_end + c) if variant.allow_bubble_before_first_b else (t >= b_end + c):
                break
            lvl += change["F"]
            t += dur["F"][r]
            extra[r] += 1
        b_end = max(t, b_end + c) + dur["B"][r]
    for r in range(1, p):   # fewer than the previous rank, or as many when both run all m (never more: deadlock)
        while extra[r] > extra[r - 1] or (extra[r] == extra[r - 1] and 0 < extra[r] < m - 1):
            extra[r] -= 1
    for r in range(p):
        for _ in range(extra[r]):
            run(r, "F")
    for r in range(p - 1, -1, -1):
        run(r, "B")

    # 2. One F per rank (unless it skips), then one B per rank from the last, per round.
    for _ in range(1, m):
        forward = [done["F"][r] < m for r in range(p)]
        if variant.prioritize_b:
            for r in range(p - 1):
                if forward[r] and done["F"][r] >= done["F"][r + 1] + 2 and skips_forward(r):
                    forward[r] = False
        for r in range(p - 2, -1, -1):                  # a rank runs an F only if the next one does
            forward[r] = forward[r] and forward[r + 1]
        for r in range(p):
            if forward[r]:
                ws_before(r, "F")
                run(r, "F")
        for r in range(p - 1, -1, -1):
            ws_before(r, "B")
            if r == 0 and done["F"][0] == m:
                while w_left(0):
                    run(0, "W")
            run(r, "B")

    # 3. The W's left.
    for r in range(p):
        while done["W"][r] < m:
            run(r, "W")
    longest = max(f - s for f, s in zip(free, first_start))
    return ZBSchedule(variant, orders, max(free) - min(first_start), longest)


def zb_auto_schedules(problem: Problem) -> list[ZBSchedule]:
    """Every variant's schedule, in the paper's grid order."""
    return [zb_auto_schedule(problem, variant) for variant in ZB_VARIANTS]


def paper_choice(schedules: list[ZBSchedule]) -> ZBSchedule:
    """The schedule the paper's grid search keeps: the shortest longest rank (the first of equals)."""
    return min(schedules, key=lambda s: s.longest_rank)
