"""Exercise schedule-under-memory-cap (chapter 5): a greedy scheduler that keeps every rank under a memory cap."""

import heapq
import itertools
import math

from course.costs import Costs
from course.plan import Plan
from course.sim import simulate


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

    def greedy(prefer):
        """Each rank, whenever it is free, runs the first of ``prefer``'s kinds that is ready and fits the cap."""
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

            i = nb[r]
            can = {"B": i < nf[r] and ready(f_end[r][i]) and (r == p - 1 or ready(b_end[r + 1][i])),
                   "F": nf[r] < m and level[r] + 1 <= cap + eps and (r == 0 or ready(f_end[r - 1][nf[r]])),
                   "W": nw[r] < nb[r]}
            choice = next((kind for kind in prefer if can[kind]), None)
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
        return orders if all(n == m for n in nw) else None

    # No one priority is best everywhere (B first frees the rank below soonest; with a loose cap, forwards first
    # fill the pipeline sooner): try each and keep the shortest, as the simulator times them.
    costs = Costs(f=f, b=b, w=w, w_mem=w_mem)
    best = None
    for prefer in itertools.permutations("BFW"):
        orders = greedy(prefer)
        if orders is None:
            continue
        makespan = simulate(Plan.parse("\n".join(" ".join(o) for o in orders), m), costs).makespan
        if best is None or makespan < best[0]:
            best = (makespan, orders)
    if best is None:
        raise ValueError(f"no order fits under cap {cap}: the ranks wait for each other")
    return best[1]
    ### END SOLUTION
