"""Schedules: pure functions (p, m, ...) -> Plan, collected in a registry the CLI lists.

Add a schedule by decorating a builder with ``@register(name, params=..., summary=...)`` in a module of this
package and importing that module below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..plan import Plan


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
    for name, val in (("p", p), ("m", m)):
        if not isinstance(val, int) or isinstance(val, bool) or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")


def build(name: str, p: int, m: int, **params) -> Plan:
    """Build the named schedule's plan.  Parameters it does not take must be None or absent."""
    if name not in REGISTRY:
        raise ValueError(f"unknown schedule {name!r}; known: {', '.join(REGISTRY)}")
    info = REGISTRY[name]
    extra = sorted(k for k, v in params.items() if v is not None and k not in info.params)
    if extra:
        takes = ", ".join(info.params) or "no parameters beyond p and m"
        raise ValueError(f"{name} does not take {', '.join(extra)} (it takes: {takes})")
    check_pm(p, m)
    return info.build(p, m, **{k: v for k, v in params.items() if v is not None})


from . import basic, interleaved, zero_bubble, dualpipe, controllable  # noqa: E402,F401  (register the schedules)

__all__ = ["REGISTRY", "ScheduleInfo", "build", "register", "check_pm"]
