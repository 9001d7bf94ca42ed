"""The one scoring rule of the course: the local judge, the nbgrader test cells and the regrade all use it.

An exercise worth ``points`` whose tests (public and hidden together) ran ``total`` tests of which ``passed``
passed scores ``points * passed / total``, rounded to one decimal: partial credit, test by test.  Every test
counts the same; a test file that cannot even be loaded (a syntax error in the answer, a name it does not define)
fails every test in it.
"""

from __future__ import annotations


def partial_points(points: float, passed: int, total: int) -> float:
    """``points * passed / total`` rounded to one decimal (0 when there is no test)."""
    return round(points * passed / total, 1) if total else 0.0


__all__ = ["partial_points"]
