"""Exercise heavy-stage-position (chapter 2): where one slow stage hurts 1F1B least, and the makespan it costs."""

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


def makespan_heavy_last(p, m, h):
    """1F1B's makespan when the last of p stages is h times slower: F = 1, backward = 2 elsewhere."""
    ### BEGIN SOLUTION
    _check(p, m, h)
    # Micro-batch 0 crosses every stage down and back: 3(p - 1) + 3h.  After that the slow last stage is the
    # bottleneck and runs its m - 1 other forward+backward pairs back to back: 3h each.
    return 3.0 * (p - 1) + 3.0 * h + 3.0 * h * (m - 1)
    ### END SOLUTION
