"""The seed blog's claim, tested: "scheduling the heaviest micro-batch first cuts JCT by 15-30%".

Draws many random skewed workloads (log-normal micro-batch costs, random arrival order) and simulates each twice,
FIFO and heaviest-first, on several pipelines (inference = forward only, training = 1F1B; balanced stages or one
heavy stage).  Prints the distribution of the makespan gain (quantiles, the share of workloads with a gain of 15%
or more, the share where heaviest-first is slower), how the mean micro-batch completion time changes, and, on
smaller batches where the exhaustive optimum is affordable, how far heaviest-first stays from it.

Usage: python benchmarks/blog_claim.py [--n N] [--m M] [--seed S] [--json]   (default run < 30 s on one core)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course.ordering import SCENARIOS, heaviest_first_effect, skewed_workloads  # noqa: E402

P = 4
QUANTILES = (0.0, 0.1, 0.5, 0.9, 1.0)


def summarize(values: list[float]) -> dict:
    v = np.asarray(values)
    q = np.quantile(v, QUANTILES).round(4) + 0.0      # + 0.0 turns -0.0 into 0.0
    return {"quantiles": dict(zip(("min", "p10", "median", "p90", "max"), q.tolist())),
            "share_ge_15pct": float(np.mean(v >= 0.15 - 1e-12)), "share_negative": float(np.mean(v < -1e-9))}


def study(n: int, m: int, n_opt: int, m_opt: int, seed: int) -> list[dict]:
    rows = []
    for sigma in (0.3, 1.0):
        work = skewed_workloads(n, m, sigma, seed)
        small = skewed_workloads(n_opt, m_opt, sigma, seed + 1)
        for name, (schedule, costs) in SCENARIOS.items():
            eff = heaviest_first_effect(work, P, schedule, costs)
            opt = heaviest_first_effect(small, P, schedule, costs, optimum=True)
            rows.append({"scenario": name, "sigma": sigma, "m": m, "n": n,
                         "gain": summarize(eff["gain"]), "mean_completion": summarize(eff["mean_completion"]),
                         "m_opt": m_opt, "n_opt": n_opt, "gap_to_best": summarize(opt["gap"])})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=150, help="workloads per scenario (default 150)")
    ap.add_argument("--m", type=int, default=8, help="micro-batches per workload (default 8)")
    ap.add_argument("--n-opt", type=int, default=15, help="workloads per scenario for the optimum (default 15)")
    ap.add_argument("--m-opt", type=int, default=5, help="micro-batches when comparing with the optimum (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = study(args.n, args.m, args.n_opt, args.m_opt, args.seed)
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"heaviest-first vs FIFO, p={P}, m={args.m}, {args.n} workloads per row; gain = (FIFO - HF) / FIFO makespan")
    print(f"{'scenario':<36} {'sigma':>5} | {'min':>6} {'p10':>6} {'median':>6} {'p90':>6} {'max':>6} | {'>=15%':>6} "
          f"{'worse':>6} | {'mean-JCT':>8} | {'gap to best (m=' + str(args.m_opt) + ')':>20}")
    for r in rows:
        q, g, mc = r["gain"]["quantiles"], r["gain"], r["mean_completion"]["quantiles"]
        gap = r["gap_to_best"]["quantiles"]
        print(f"{r['scenario']:<36} {r['sigma']:>5} | " + " ".join(f"{q[k]:>6.1%}" for k in q)
              + f" | {g['share_ge_15pct']:>6.0%} {g['share_negative']:>6.0%} | {mc['median']:>+8.1%} | "
              f"median {gap['median']:>5.1%} max {gap['max']:>5.1%}")
    print("mean-JCT: median change of the mean micro-batch completion time under heaviest-first (+ = slower)")
    print(f"elapsed {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
