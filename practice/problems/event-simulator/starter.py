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
    raise NotImplementedError  # TODO: your code here
