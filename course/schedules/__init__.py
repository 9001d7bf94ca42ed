"""Schedules: pure functions (p, m, ...) -> Plan, collected in a registry the CLI lists.

Add a schedule by decorating a builder with ``@register(name, params=..., summary=...)`` (from ``.registry``) in a
module of this package and importing that module below.
"""

from __future__ import annotations

from ..fast import gc_paused
from ..plan import Plan
from .registry import REGISTRY, ScheduleInfo, check_pm, register


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
    with gc_paused():              # a plan is 10^5 ops without cycles: collecting meanwhile only rescans them
        return info.build(p, m, **{k: v for k, v in params.items() if v is not None})


from . import basic, controllable, dualpipe, interleaved, zero_bubble  # noqa: E402,F401  (importing them registers them)

__all__ = ["REGISTRY", "ScheduleInfo", "build", "register", "check_pm"]
