"""Exercise heavy-stage-position (chapter 2): where one slow stage hurts 1F1B least, and its makespan at the front."""

import math

from course.costs import Costs
from course.schedules import build
from course.sim import simulate


def _check(p, m, h):
    for name, value in (("p", p), ("m", m)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if type(h) not in (int, float) or not math.isfinite(h) or h < 1:
        raise ValueError(f"h must be a finite number >= 1, got {h!r}")


def best_positions(p, m, h):
    """The positions of a stage h times slower (F and B alike) that give 1F1B its shortest makespan, ascending."""
    ### BEGIN SOLUTION
    _check(p, m, h)
    spans = []
    for k in range(p):
        f = [1.0] * p
        f[k] = float(h)
        spans.append(simulate(build("1f1b", p, m), Costs(f=f, b=f, w=f)).makespan)
    best = min(spans)
    return [k for k, t in enumerate(spans) if t <= best * (1 + 1e-12)]
    ### END SOLUTION


def makespan_heavy_first(p, m, h):
    """1F1B's makespan for m >= p when the first of p stages is h times slower: F = 1, backward = 2 elsewhere.

    Raises ValueError for m < p (the closed form asked for is the one for a full warm-up).
    """
    ### BEGIN SOLUTION
    _check(p, m, h)
    if m < p:
        raise ValueError(f"the closed form is for m >= p, got m={m} < p={p}")
    # The heavy stage 0 is busy m(h + 2h) = 3hm and idles in two places only.
    # - Before its first backward: it runs p forwards (p*h) while the first gradient needs h for F0 on stage 0
    #   plus 3(p-1) down and back through the fast stages: it waits (p-1) * max(0, 3 - h).
    # - In its cool-down: after its last forward it still has p-1 backwards (2h each) to run, while the last
    #   gradient needs 3(p-1) to come back: it waits (p-1) * max(0, 3 - 2h).
    return 3.0 * h * m + (p - 1) * max(0.0, 3.0 - h) + (p - 1) * max(0.0, 3.0 - 2.0 * h)
    ### END SOLUTION
