"""Exercise schedule-under-memory-cap (chapter 5): a greedy scheduler that keeps every rank under a memory cap."""

import heapq
import math


def schedule_under_cap(p, m, f, b, w, cap, w_mem=1.0):
    """Per rank, an order of "F i", "B i", "W i" tokens (split backward, rank r runs stage r) that never holds more
    than ``cap`` micro-batch activations on any rank (F allocates 1, B frees 1 - w_mem, W frees w_mem) and
    keeps one iteration short.  Raises ValueError for bad arguments or a cap below one activation.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    for name, value in (("f", f), ("b", b), ("w", w), ("cap", cap), ("w_mem", w_mem)):
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    if cap < 1 or w_mem > 1:
        raise ValueError(f"need cap >= 1 (one micro-batch's activations) and w_mem <= 1, got cap={cap}, w_mem={w_mem}")
    eps = 1e-9
    f_end = [[None] * m for _ in range(p)]
    b_end = [[None] * m for _ in range(p)]
    nf, nb, nw = [0] * p, [0] * p, [0] * p
    level = [0.0] * p
    orders = [[] for _ in range(p)]
    ends = []                             # when each op placed so far ends: the moments an input can arrive
    stalled = set()                       # idle ranks that nothing placed so far can unblock
    wake = [(0.0, r) for r in range(p)]   # (time the rank is free, rank)
    heapq.heapify(wake)
    while wake:
        t, r = heapq.heappop(wake)
        if nw[r] == m:
            continue

        def ready(end, t=t):
            return end is not None and end <= t + eps

        choice = None
        i = nb[r]
        if i < nf[r] and ready(f_end[r][i]) and (r == p - 1 or ready(b_end[r + 1][i])):
            choice = "B"                  # someone upstream waits for this gradient
        elif nf[r] < m and level[r] + 1 <= cap + eps and (r == 0 or ready(f_end[r - 1][nf[r]])):
            # Keep a slot free for the W's we owe: a forward only when no B could arrive and find us stuck.
            choice = "F"
        elif nw[r] < nb[r]:
            choice = "W"                  # nobody waits for W: run it when nothing else can, and free memory
        if choice is None:                # look again when the next op placed so far ends
            later = [e for e in ends if e > t + eps]
            if later:
                heapq.heappush(wake, (min(later), r))
            else:
                stalled.add(r)
            continue
        if choice == "B":
            i, d = nb[r], b
            b_end[r][i] = t + d
            nb[r] += 1
            level[r] -= 1 - w_mem
        elif choice == "F":
            i, d = nf[r], f
            f_end[r][i] = t + d
            nf[r] += 1
            level[r] += 1
        else:
            i, d = nw[r], w
            nw[r] += 1
            level[r] -= w_mem
        orders[r].append(f"{choice}{i}")
        ends.append(t + d)
        heapq.heappush(wake, (t + d, r))
        for q in stalled:
            heapq.heappush(wake, (t + d, q))
        stalled.clear()
    if any(n < m for n in nw):
        raise ValueError(f"no order fits under cap {cap}: the ranks wait for each other")
    return orders
    ### END SOLUTION
