"""Chrome trace-event JSON for a Timeline: open it in Perfetto (ui.perfetto.dev) or chrome://tracing.

One process per rank ("rank r"), with one thread holding one complete event (``"ph": "X"``) per step: its name
is the op (``F3.s0``, ``F3.s0&B1.s7`` for an overlapped pair), its category the kind, and ``args`` carry
``kind``, ``micro_batch`` and ``stage`` (lists for a pair).  Each rank also gets a counter track
(``"ph": "C"``) of the memory it holds over time: bytes when the caller passes byte curves (the memory model's
``PipelineMemory.curves()``, the live runtime's measured saved-tensor bytes), otherwise the timeline's own
activation levels in its ``act`` units.

Times are integers or floats in microseconds, as the format requires: a measured timeline (seconds) keeps its
scale; a simulated one maps one cost unit to ``unit_us`` microseconds (default 1000: a cost unit shows as 1 ms).
Format: "Trace Event Format", Google, https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .files import write_file
from .plan import ops_of
from .timeline import Timeline


def chrome_trace(tl: Timeline, memory: Sequence[Sequence[tuple[float, float]]] | None = None,
                 memory_name: str | None = None, unit_us: float | None = None) -> dict:
    """The trace as a JSON-ready dict ``{"traceEvents": [...], ...}``.

    ``memory``: per rank [(time, bytes), ...] in the timeline's time unit (default: ``tl.memory``)."""
    scale = unit_us if unit_us is not None else (1e6 if tl.unit == "s" else 1000.0)
    t0 = tl.start
    if memory is None:       # the timeline's own levels, in its act units
        memory, counter, key = tl.memory, memory_name or "activations (act units)", "activations"
    else:
        counter, key = memory_name or "memory (bytes)", "bytes"
    events: list[dict] = []
    for r in range(tl.p):
        events.append({"name": "process_name", "ph": "M", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": r, "tid": 0, "args": {"sort_index": r}})
        events.append({"name": "thread_name", "ph": "M", "pid": r, "tid": 0, "args": {"name": "compute"}})
        for start, end, step in zip(tl.starts[r], tl.ends[r], tl.steps[r]):
            ops = ops_of(step)
            kind = "&".join(op.kind for op in ops)
            args = ({"kind": kind, "micro_batch": ops[0].mb, "stage": ops[0].stage} if len(ops) == 1 else
                    {"kind": kind, "micro_batch": [op.mb for op in ops], "stage": [op.stage for op in ops]})
            events.append({"name": str(step), "cat": kind, "ph": "X", "pid": r, "tid": 0,
                           "ts": (start - t0) * scale, "dur": (end - start) * scale, "args": args})
        for t, level in memory[r]:
            events.append({"name": counter, "ph": "C", "pid": r, "ts": (max(t, t0) - t0) * scale,
                           "args": {key: level}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"schedule": tl.name, "p": tl.p, "unit": tl.unit, "us_per_unit": scale}}


def write_trace(path: str | Path, tl: Timeline, memory=None, memory_name: str | None = None,
                unit_us: float | None = None) -> Path:
    """Write ``chrome_trace(...)`` to ``path``; return the path."""
    path = Path(path)
    try:
        write_file(path, json.dumps(chrome_trace(tl, memory, memory_name, unit_us)))
    except OSError as e:
        raise ValueError(f"cannot write trace {str(path)!r}: {e.strerror}") from None
    return path


__all__ = ["chrome_trace", "write_trace"]
