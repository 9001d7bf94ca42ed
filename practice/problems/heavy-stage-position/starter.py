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
    raise NotImplementedError  # TODO: your code here


def makespan_heavy_first(p, m, h):
    """1F1B's makespan for m >= p when the first of p stages is h times slower: F = 1, backward = 2 elsewhere.

    Raises ValueError for m < p (the closed form asked for is the one for a full warm-up).
    """
    raise NotImplementedError  # TODO: your code here
