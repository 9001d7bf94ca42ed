"""Simulator speed: our event-driven simulate() against a per-stage polling baseline (the seed chapter's
algorithm: sweep every stage each round, integer time, one op per stage per sweep), same plan, same run.

Targets: ours <= 1.0x the baseline on 1F1B p=64, m=1024 (131,072 ops) while modelling float costs, latency,
memory and deadlocks; linear growth (m=4096 vs m=1024 <= 4.6x).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course.costs import Costs  # noqa: E402
from course.schedules import build  # noqa: E402
from course.sim import simulate  # noqa: E402


def polling_baseline(orders, p, tf=1, tb=2):
    """Per-stage polling with integer time, as the seed's small simulator does (rows of characters included)."""
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
            rows[s] += ["."] * (start - len(rows[s])) + ["x"] * (end - start)
            done[(kind, s, i)] = t_free[s] = end
            live[s] += 1 if kind == "F" else -1
            peak[s] = max(peak[s], live[s])
            pos[s] += 1
    return max(t_free), peak


def cpu_time(fn):
    """CPU seconds of one call (process time: less disturbed by other processes than wall time), each call
    starting from a collected heap so that one side's garbage is not collected on the other's clock."""
    gc.collect()
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def paired_ratio(anchor, measured, repeat=7):
    """Median over rounds of measured's CPU time / anchor's, the two run back to back in each round: a burst of
    load from other processes then slows both sides of a round alike.  Also returns the best times and the
    last outputs."""
    ratios, best, outs = [], [float("inf")] * 2, [None, None]
    for _ in range(repeat):
        times = []
        for j, fn in enumerate((anchor, measured)):
            t, outs[j] = cpu_time(fn)
            best[j] = min(best[j], t)
            times.append(t)
        ratios.append(times[1] / times[0])
    return statistics.median(ratios), best, outs


def main():
    p, m = 64, 1024
    plan = build("1f1b", p, m)
    orders = [[(op.kind, op.mb) for op in ops] for ops in plan.ranks]
    costs = Costs(f=1, b=1, w=1)
    def ours():
        tl = simulate(plan, costs)
        tl.peak_activations        # the baseline tracks memory too
        return tl

    ratio, (t_base, t_ours), ((base_makespan, base_peak), tl) = paired_ratio(lambda: polling_baseline(orders, p), ours)
    assert tl.peak_activations == base_peak, (tl.peak_activations[:4], base_peak[:4])
    assert tl.makespan == base_makespan, (tl.makespan, base_makespan)
    print(f"1f1b p={p} m={m} ({2 * p * m} ops): baseline {t_base:.3f}s, ours {t_ours:.3f}s (best of each) "
          f"-> ratio {ratio:.2f}x (median of paired runs; target <= 1.0x); makespan {tl.makespan:g} in both")
    # Growth: one m=4096 run against four m=1024 runs, so that both sides of a round do the same work for
    # as long (a longer sample is likelier to be disturbed by other processes).
    big = build("1f1b", p, 4 * m)
    growth, _, _ = paired_ratio(lambda: [simulate(plan, costs) for _ in range(4)], lambda: simulate(big, costs), 5)
    print(f"growth: m={4 * m} vs m={m}: {4 * growth:.2f}x (target <= 4.6x for 4x the ops)")


if __name__ == "__main__":
    main()
