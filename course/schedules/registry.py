"""The schedule registry: every builder registers itself here under a name the CLI lists.

Below the builders (each imports ``register`` from here) and below the package, which imports them all, so the
package's imports run one way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..plan import Plan
from ..validation import check_counts


@dataclass(frozen=True)
class ScheduleInfo:
    name: str
    build: Callable[..., Plan]
    params: tuple[str, ...]   # the keyword parameters beyond p and m (e.g. ("v",))
    summary: str


REGISTRY: dict[str, ScheduleInfo] = {}


def register(name: str, params: tuple[str, ...] = (), summary: str = ""):
    def wrap(fn):
        REGISTRY[name] = ScheduleInfo(name, fn, tuple(params), summary or (fn.__doc__ or "").strip().splitlines()[0])
        return fn
    return wrap


def check_pm(p, m) -> None:
    """Every schedule's argument check: p and m are positive ints."""
    check_counts(p=p, m=m)
