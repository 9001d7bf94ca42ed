"""The two argument rules every module of the course applies, written once: a count and a number.

A count (p, m, v, iterations, a model's layers, a world size) is a Python int >= 1, never a bool (True is an
int to Python, but never a count a caller meant).  A number (a cost, a latency, a timeout, a cap) is a finite
real: an int, a float or a numpy scalar, never a bool, NaN or an infinity.  The checks raise ValueError with one
line that names the argument, says what is allowed and shows what it got.
"""

from __future__ import annotations

import math
from numbers import Real


def is_count(x) -> bool:
    """A positive integer (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def check_counts(**values) -> None:
    """``check_counts(p=p, m=m)``: each a positive integer."""
    for name, value in values.items():
        if not is_count(value):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def is_number(x) -> bool:
    """A finite real number (not a bool, not NaN, not an infinity)."""
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x)


def check_positive_number(name: str, value, unit: str = "") -> None:
    """``value`` a finite number > 0 (of ``unit``, named in the message: "seconds")."""
    if not (is_number(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number{' of ' + unit if unit else ''}, got {value!r}")
