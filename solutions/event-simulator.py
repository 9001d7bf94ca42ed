"""Exercise event-simulator (chapter 2): an event-driven simulator for one-stage-per-rank pipeline plans."""

import heapq


class Deadlock(Exception):
    """The order cannot finish: ranks wait on each other.  The message names what each stuck rank waits for."""


def simulate(ranks, f, b, comm=0.0):
    """Simulate ``ranks`` (ranks[s] = tokens like "F3", "B3" that rank s runs, in order; rank s holds stage s).

    F of micro-batch i on stage s takes f[s] and needs F i on stage s-1; B (full backward) takes b[s] and needs
    F i on stage s and B i on stage s+1.  A message between two ranks arrives ``comm`` after its producer ends.
    Each op starts as soon as its rank is free and its inputs are there.
    Returns spans[s] = [(start, end), ...] in the rank's order; raises Deadlock when the order cannot finish.
    """
    ### BEGIN SOLUTION
    p = len(ranks)
    done = {}                        # (kind, mb, stage) -> end time
    pos = [0] * p
    free = [0.0] * p
    spans = [[] for _ in range(p)]
    events = []                      # (end, rank): completion of the op at pos[rank]

    def needs(kind, mb, s):
        if kind == "F":
            return [("F", mb, s - 1)] if s > 0 else []
        return [("F", mb, s)] + ([("B", mb, s + 1)] if s + 1 < p else [])

    def try_start(s):
        kind, mb = ranks[s][pos[s]][0], int(ranks[s][pos[s]][1:])
        start = free[s]
        for dep in needs(kind, mb, s):
            if dep not in done:
                return
            start = max(start, done[dep] + (comm if dep[2] != s else 0.0))
        end = start + (f[s] if kind == "F" else b[s])
        spans[s].append((start, end))
        heapq.heappush(events, (end, s))

    for s in range(p):
        if ranks[s]:
            try_start(s)
    while events:
        end, s = heapq.heappop(events)
        token = ranks[s][pos[s]]
        done[(token[0], int(token[1:]), s)] = end
        free[s] = end
        pos[s] += 1
        # Everyone whose next op may have been waiting for this one gets another try.
        for r in range(p):
            if pos[r] < len(ranks[r]) and len(spans[r]) == pos[r]:
                try_start(r)
    stuck = [s for s in range(p) if pos[s] < len(ranks[s])]
    if stuck:
        raise Deadlock("; ".join(f"rank {s} waits at {ranks[s][pos[s]]}" for s in stuck))
    return spans
    ### END SOLUTION
