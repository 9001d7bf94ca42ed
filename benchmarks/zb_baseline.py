"""The Zero Bubble paper's automatic scheduler (Qi et al. 2023, section 3.1 and its public code's greedy
"manual order"), re-implemented here as the baseline for bench_search.py.  Reference only: written from the
paper's description and a reading of sail-sg/zero-bubble-pipeline-parallelism, nothing copied.

Round-based list scheduling, one stage per rank, each kind in micro-batch order:

1. Warm-up (micro-batch 0): every stage runs F0; then, from the last stage back, each stage adds forwards while
   memory allows and they do not push its first B later than its input arrives (a binary choice: stop before
   the forward that would overrun, or allow one that starts before the arrival); counts are then made strictly
   decreasing from stage to stage.  Then B0 runs from the last stage to the first.
2. Each later round: every stage that still has forwards runs one F (optionally skipped when the stage is two
   ahead of the next one and waiting would cost less than the largest bubble elsewhere, "prioritise B"), then
   every stage from the last to the first runs one B.  Before each op, W's run while memory is short, then
   while one fits before the op's input arrives, then one more if the gap is worth it ("no-bubble greedy").
3. The remaining W's.

Eight variants (three binary choices); the best by its own timing is kept.  Times are the as-soon-as-possible
times of the orders, the simulator's semantics.
"""

from __future__ import annotations

from itertools import product

from course.plan import Op


def zb_orders(problem, allow_bubble_before_first_b: bool, prioritize_b: bool, no_bubble_greedy: bool):
    """One variant: (per-rank orders, makespan by its own timing).  Raises ValueError if memory cannot fit."""
    P, M, c = problem.p, problem.m, problem.comm
    cost = {"F": problem.f, "B": problem.b, "W": problem.w}
    mem = {"F": 1.0, "B": -(1.0 - problem.w_mem), "W": -problem.w_mem}
    cap = problem.cap
    count = {k: [0] * P for k in "FBW"}
    end_of = {k: [[0.0] * M for _ in range(P)] for k in "FBW"}
    busy_until = [0.0] * P
    level = [0.0] * P
    bubble = [0.0] * P
    orders = [[] for _ in range(P)]

    def input_ready(kind, s, i):
        if kind == "F" and s > 0:
            return end_of["F"][s - 1][i] + c
        if kind == "B" and s < P - 1:
            return end_of["B"][s + 1][i] + c
        return 0.0

    def put(s, kind):
        i = count[kind][s]
        finish = max(busy_until[s], input_ready(kind, s, i)) + cost[kind][s]
        if count["F"][s] > 0:
            bubble[s] += finish - (busy_until[s] + cost[kind][s])
        busy_until[s] = end_of[kind][s][i] = finish
        level[s] += mem[kind]
        count[kind][s] += 1
        orders[s].append(Op(kind, i, s))

    def pending_w(s):
        return count["W"][s] < count["B"][s]

    def fill_before(s, kind, i):
        """W's for memory, W's that fit before the input of (kind, i) arrives, then maybe one more."""
        if kind == "F":
            while level[s] + mem["F"] > cap[s] + 1e-9:
                if not pending_w(s):
                    raise ValueError("cannot fit memory")
                put(s, "W")
        has_input = (kind == "F" and s > 0) or (kind == "B" and s < P - 1)
        if not has_input:
            return
        arrive = input_ready(kind, s, i)
        while pending_w(s) and busy_until[s] + cost["W"][s] <= arrive:
            put(s, "W")
        if pending_w(s) and busy_until[s] < arrive:
            worth = arrive - busy_until[s] <= max(bubble) - bubble[s]
            if not worth or no_bubble_greedy:
                put(s, "W")

    # 1. warm-up
    for s in range(P):
        put(s, "F")
    extra = [0] * P
    arrival = end_of["F"][P - 1][0] + cost["B"][P - 1]
    for s in range(P - 2, -1, -1):
        lvl, t = level[s], busy_until[s]
        while count["F"][s] + extra[s] < M and lvl + mem["F"] <= cap[s] + 1e-9:
            if allow_bubble_before_first_b:
                if t + cost["F"][s] > arrival + c:
                    break
            elif t >= arrival + c:
                break
            lvl += mem["F"]
            t += cost["F"][s]
            extra[s] += 1
        arrival = max(t, arrival + c) + cost["B"][s]
    for s in range(1, P):
        while extra[s] > 0 and extra[s] >= extra[s - 1] and count["F"][s] + extra[s] < M:
            extra[s] -= 1
    for s in range(P):
        for _ in range(extra[s]):
            put(s, "F")
    for s in range(P - 1, -1, -1):
        put(s, "B")

    # 2. one F per stage (maybe), then one B per stage, per round
    for i in range(1, M):
        want = [0] * P
        for s in range(P):
            if count["F"][s] >= M:
                continue
            if prioritize_b and s + 1 < P and count["F"][s] >= count["F"][s + 1] + 2:
                back = (busy_until[s + 1] + cost["F"][s + 1] + cost["B"][s + 1] + c)
                if busy_until[s] >= back:
                    continue
                w_time, lvl, k = 0.0, level[s] + mem["F"], 0
                while lvl > cap[s] + 1e-9 and count["W"][s] + k < count["B"][s]:
                    w_time += cost["W"][s]
                    lvl += mem["W"]
                    k += 1
                if busy_until[s] + cost["F"][s] + w_time > back and \
                        back - busy_until[s] <= max(bubble) - bubble[s]:
                    continue
            want[s] = 1
        for s in range(P - 2, -1, -1):
            want[s] = min(want[s], want[s + 1])
        for s in range(P):
            if want[s]:
                fill_before(s, "F", count["F"][s])
                put(s, "F")
        for s in range(P - 1, -1, -1):
            fill_before(s, "B", count["B"][s])
            if s == 0 and count["F"][0] == M:
                while pending_w(0):
                    put(0, "W")
            put(s, "B")

    # 3. the rest of the W's
    for s in range(P):
        while count["W"][s] < M:
            put(s, "W")
    return orders, max(busy_until)


def zb_heuristic(problem):
    """The eight variants; the best by its own makespan: (orders, makespan, variant)."""
    best = None
    for variant in product((True, False), repeat=3):
        try:
            orders, span = zb_orders(problem, *variant)
        except ValueError:
            continue
        if best is None or span < best[1]:
            best = (orders, span, variant)
    if best is None:
        raise ValueError("no variant of the ZB heuristic fits the memory cap")
    return best
