"""Memory tracking's own memory: tracemalloc peak of one 1F1B p=64, m=1024 simulation (131,072 ops) tracking
memory in bytes (course.memory: chunk bytes as Costs.act, each rank's static bytes, its activation bytes over time
and its peak), against the plain timeline of the same plan without memory tracking, measured in the same run.

Target: tracked / plain <= 2x.  The plan is built before either measurement (both sides need it).  Also printed,
not targeted: the same with ``PipelineMemory.curves()``, a plotting copy of every point with the static bytes added.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from targets import Targets  # benchmarks/ is sys.path[0] for a script run from it

from course.costs import Costs
from course.memory import PRESETS, ActivationConfig, pipeline_memory
from course.schedules import build
from course.sim import simulate

P, M = 64, 1024
TARGET = 2.0


def peak_bytes(fn) -> int:
    """Peak bytes tracemalloc sees allocated during ``fn()`` (its result kept alive to the end)."""
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    return peak


def plain(plan):
    tl = simulate(plan, Costs())
    return tl.makespan, tl.busy           # the timeline's metrics, no memory levels


def tracked(plan, copy=False):
    model = PRESETS["gpt3-175b"]          # 96 layers: 64 chunks of 1 or 2 layers
    pm = pipeline_memory(plan, model, ActivationConfig(2048, 1, 8, True, "selective"))
    return pm.timeline.makespan, pm.timeline.busy, pm.timeline.memory, pm.peak, pm.curves() if copy else None


def main() -> int:
    plan = build("1f1b", P, M)
    tracked(build("1f1b", 4, 8))          # one-off allocations (imports, caches) outside both measurements
    base = peak_bytes(lambda: plain(plan))
    mem = peak_bytes(lambda: tracked(plan))
    with_copy = peak_bytes(lambda: tracked(plan, copy=True))
    ratio, targets = mem / base, Targets()
    print(f"1f1b p={P} m={M} ({2 * P * M:,} ops): plain timeline {base / 2**20:.1f} MiB, with memory tracking "
          f"in bytes {mem / 2**20:.1f} MiB -> ratio {ratio:.2f}x (target <= {TARGET:g}x: "
          f"{targets.check(f'memory tracking <= {TARGET:g}x the plain timeline', ratio <= TARGET)}); "
          f"with the curves() plotting copy {with_copy / base:.2f}x")
    return targets.exit_code()


if __name__ == "__main__":
    sys.exit(main())
