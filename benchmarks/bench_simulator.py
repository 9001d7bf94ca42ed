"""Simulator speed against the seed chapter's simulator (per-stage polling: sweep every stage each round, integer
time, one op per stage per sweep), same plan, same run.  1F1B, p=64, m=1024 (131,072 ops).

Three ratios, each the median over rounds of (ours / seed) measured back to back:

1. ``python -m course sim 1f1b -p 64 -m 1024 --json`` end to end against the seed's program end to end (both as
   subprocesses, their CPU time: interpreter start, imports, building the orders, simulating, printing), with
   bytecode cached as Python does by default (in a temporary PYCACHE prefix, warmed by one run of each: the
   sandboxes this course is developed in set PYTHONDONTWRITEBYTECODE, which would recompile every course module
   on every run).  Target <= 1.0x.
2. course.sim.simulate, the plain simulator a learner reads, against the seed's simulator in this process
   (it checks the plan, models float costs, latency, memory and deadlocks; no target: it is written to be read).
3. course.sim_compiled.CompiledPlan (compile + simulate), the same rule laid out for speed.  Target <= 1.0x.

Growth: the compiled simulator at m=4096 against m=1024 (target <= 4.6x for 4x the ops), and what its one kept
micro-optimisation, pausing the garbage collector, gains at m=4096.
"""

from __future__ import annotations

import gc
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from unittest.mock import patch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from targets import Targets  # noqa: E402  (benchmarks/ is sys.path[0] for a script run from it)

from course import sim_compiled  # noqa: E402
from course.costs import Costs  # noqa: E402
from course.schedules import build  # noqa: E402
from course.sim import simulate  # noqa: E402
from course.sim_compiled import CompiledPlan  # noqa: E402

P, M = 64, 1024


def seed_orders(p, m):
    """The seed's 1F1B orders: p-s-1 warm-up forwards on stage s, then one forward one backward, then drain."""
    orders = []
    for s in range(p):
        warm = min(p - s - 1, m)
        order = [("F", i) for i in range(warm)]
        for i in range(m - warm):
            order += [("F", warm + i), ("B", i)]
        order += [("B", i) for i in range(m - warm, m)]
        orders.append(order)
    return orders


def polling_baseline(orders, p, tf=1, tb=2):
    """The seed's simulator: per-stage polling with integer time, rows of characters included (its code, with
    the dependency written out over several lines)."""
    done, t_free, pos = {}, [0] * p, [0] * p
    rows = [[] for _ in range(p)]
    live, peak = [0] * p, [0] * p
    while any(pos[s] < len(orders[s]) for s in range(p)):
        for s in range(p):
            if pos[s] == len(orders[s]):
                continue
            kind, i = orders[s][pos[s]]
            if kind == "F":
                dep = ("F", s - 1, i) if s > 0 else None
            else:
                dep = ("B", s + 1, i) if s < p - 1 else ("F", s, i)
            if dep is not None and dep not in done:
                continue
            start = max(t_free[s], done.get(dep, 0))
            end = start + (tf if kind == "F" else tb)
            rows[s] += ["."] * (start - len(rows[s])) + [str(i) if kind == "F" else chr(ord("a") + i)] * (end - start)
            done[(kind, s, i)] = t_free[s] = end
            live[s] += 1 if kind == "F" else -1
            peak[s] = max(peak[s], live[s])
            pos[s] += 1
    return max(t_free), peak


# The seed's program end to end: build the orders, simulate, print the figures (as JSON, like `sim --json`).
SEED_PROGRAM = "\n".join([
    "import json", inspect.getsource(seed_orders), inspect.getsource(polling_baseline),
    f"total, peak = polling_baseline(seed_orders({P}, {M}), {P})",
    f"print(json.dumps({{'makespan': total, 'bubble_ratio': 1 - {P * M * 3} / ({P} * total), 'peak': peak}}))"])
CLI = [sys.executable, "-m", "course", "sim", "1f1b", "-p", str(P), "-m", str(M), "--json"]
# Subprocesses write and reuse bytecode (Python's default), in a directory of their own.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def cpu_time(fn):
    """CPU seconds of one call (process time: less disturbed by other processes than wall time), each call
    starting from a collected heap so that one side's garbage is not collected on the other's clock."""
    gc.collect()
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def child_cpu_time(argv):
    """CPU seconds (user + system) of one subprocess run to its end, and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT, env=CHILD_ENV).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, out


def paired_ratio(anchor, measured, repeat=7, clock=cpu_time):
    """Median over rounds of measured's time / anchor's, the two run back to back in each round: a burst of
    load from other processes then slows both sides of a round alike.  Also returns the best times and the
    last outputs."""
    ratios, best, outs = [], [float("inf")] * 2, [None, None]
    for _ in range(repeat):
        times = []
        for j, fn in enumerate((anchor, measured)):
            t, outs[j] = clock(fn)
            best[j] = min(best[j], t)
            times.append(t)
        ratios.append(times[1] / times[0])
    return statistics.median(ratios), best, outs


def main() -> int:
    targets = Targets()
    with tempfile.TemporaryDirectory() as cache:
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = cache
        end_to_end(targets)
    in_process(targets)
    return targets.exit_code()


def end_to_end(targets: Targets):
    """1. As a user runs each."""
    for argv in ([sys.executable, "-c", SEED_PROGRAM], CLI):   # warm the bytecode cache
        child_cpu_time(argv)
    ratio, (t_seed, t_cli), (seed_out, cli_out) = paired_ratio(
        [sys.executable, "-c", SEED_PROGRAM], CLI, repeat=5, clock=child_cpu_time)
    seed, ours = json.loads(seed_out), json.loads(cli_out)
    assert (ours["makespan"], ours["peak_activations"]) == (seed["makespan"], seed["peak"]), (ours, seed)
    print(f"end to end, 1f1b p={P} m={M}: seed's program {t_seed:.3f}s, `python -m course sim --json` "
          f"{t_cli:.3f}s (best CPU of each) -> ratio {ratio:.2f}x (target <= 1.0x: "
          f"{targets.check('sim --json end to end at most the seed program', ratio <= 1.0)})")
    # What no simulator code can change: the interpreter's start; and what the course's modules cost to import.
    _, (t_bare, t_imports), _ = paired_ratio(
        [sys.executable, "-c", "pass"], [sys.executable, "-c", "import course.cli.sim, course.iterations, "
                                         "course.schedules"], repeat=5, clock=child_cpu_time)
    print(f"  fixed costs in it: the interpreter alone {t_bare:.3f}s, importing the CLI's modules "
          f"{t_imports - t_bare:.3f}s more ({(t_imports - t_bare) / t_seed:.0%} of the seed's whole program)")


def in_process(targets: Targets):
    """2 and 3. The simulators alone, in this process, on a plan built once; the compiled one's growth."""
    plan = build("1f1b", P, M)
    orders = seed_orders(P, M)
    costs = Costs(f=1, b=1, w=1)

    def base():
        return polling_baseline(orders, P)

    for label, run, limit in (("course.sim.simulate (plain)", lambda: simulate(plan, costs), None),
                              ("CompiledPlan (compile + simulate)", lambda: CompiledPlan(plan).simulate(costs), 1.0)):
        def ours(run=run):
            tl = run()
            _ = tl.peak_activations    # the baseline tracks memory too
            return tl
        ratio, (t_base, t_ours), ((base_makespan, base_peak), tl) = paired_ratio(base, ours, repeat=5)
        assert tl.peak_activations == base_peak and tl.makespan == base_makespan
        target = ("none: written to be read" if limit is None
                  else f"<= {limit:g}x: {targets.check(f'{label} at most the seed simulator', ratio <= limit)}")
        print(f"{label}: seed's simulator {t_base:.3f}s, ours {t_ours:.3f}s (best of each) -> ratio {ratio:.2f}x "
              f"(median of paired runs; target {target}); makespan {tl.makespan:g} in both")

    # Growth: one m=4096 run against four m=1024 runs, so that both sides of a round do the same work for
    # as long (a longer sample is likelier to be disturbed by other processes).
    big = build("1f1b", P, 4 * M)
    growth, _, _ = paired_ratio(lambda: [CompiledPlan(plan).simulate(costs) for _ in range(4)],
                                lambda: CompiledPlan(big).simulate(costs), 5)
    print(f"growth (compiled): m={4 * M} vs m={M}: {4 * growth:.2f}x (target <= 4.6x for 4x the ops: "
          f"{targets.check('compiled growth <= 4.6x for 4x the ops', 4 * growth <= 4.6)})")

    # The one micro-optimisation kept: the compiled simulator pauses the garbage collector (fast.gc_paused).
    def collecting():
        with patch.object(sim_compiled, "gc_paused", nullcontext):
            return CompiledPlan(big).simulate(costs)
    gain, (t_paused, t_collecting), _ = paired_ratio(lambda: CompiledPlan(big).simulate(costs), collecting, 5)
    print(f"gc pause (compiled, m={4 * M}, {2 * P * 4 * M} ops): {t_paused:.3f}s paused, {t_collecting:.3f}s "
          f"collecting -> collecting takes {gain:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
