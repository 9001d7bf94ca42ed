"""Chapter 2's printed table and closed form as an answer to heavy-stage-position.

Transcribes 02_simulator's cells `heavy-reveal` (the loop over the heavy stage's positions, simulating each) and
`heavy-last` (the closed form (m-1) max_s(F_s+B_s) + sum_s(F_s+B_s), printed for the heavy stage last), used for the
heavy stage first as well.
"""
import math

from course.costs import Costs
from course.schedules import build
from course.sim import simulate


def _check(p, m, h):
    for x in (p, m):
        if type(x) is not int or x < 1:
            raise ValueError("p and m must be positive ints")
    if type(h) not in (int, float) or not math.isfinite(h) or h < 1:
        raise ValueError("h must be a finite number >= 1")


def best_positions(p, m, h):
    _check(p, m, h)
    spans = []
    for k in range(p):
        f = [1.0] * p
        f[k] = float(h)
        spans.append(simulate(build("1f1b", p, m), Costs(f=f, b=f, w=f)).makespan)
    return [k for k, t in enumerate(spans) if t <= min(spans) * (1 + 1e-12)]


def makespan_heavy_first(p, m, h):
    _check(p, m, h)
    if m < p:
        raise ValueError("m < p")
    times = [3.0 * h] + [3.0] * (p - 1)
    return (m - 1) * max(times) + sum(times)
