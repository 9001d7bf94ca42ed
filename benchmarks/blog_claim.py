"""The seed blog's claim, tested: "scheduling the heaviest micro-batch first cuts JCT by 15-30%".

Draws many random skewed workloads (log-normal micro-batch costs with spread sigma, random arrival order) and
simulates each under FIFO, heaviest-first and its control lightest-first, on several pipelines (inference =
forward only, training = 1F1B; balanced stages or one heavy stage), for several sigma and micro-batch counts m.
Prints the distribution of each policy's makespan gain over FIFO (quantiles, the share of workloads with a gain of
15% or more, the share where the policy is slower), how the mean micro-batch completion time changes, and, on
smaller batches where the exhaustive optimum is affordable, how far the policy stays from it.  The summary at the
end gives the training median per (m, sigma): the gain is not one number, it grows with both.

Usage: python benchmarks/blog_claim.py [--n N] [--m 8,32] [--sigma 0.25,0.5,1] [--seed S] [--json]
(default run about a minute on one core)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course.ordering import SCENARIOS, order_effect, skewed_workloads

P = 4
QUANTILES = (0.0, 0.1, 0.5, 0.9, 1.0)
POLICIES = ("heaviest-first", "lightest-first")
TRAINING = "training 1F1B, balanced"


def summarize(values: list[float]) -> dict:
    v = np.asarray(values)
    q = np.quantile(v, QUANTILES).round(4) + 0.0      # + 0.0 turns -0.0 into 0.0
    return {"quantiles": dict(zip(("min", "p10", "median", "p90", "max"), q.tolist())),
            "share_ge_15pct": float(np.mean(v >= 0.15 - 1e-12)), "share_negative": float(np.mean(v < -1e-9))}


def study(n: int, ms: list[int], sigmas: list[float], n_opt: int, m_opt: int, seed: int) -> list[dict]:
    rows = []
    for sigma in sigmas:
        small = skewed_workloads(n_opt, m_opt, sigma, seed + 1)
        gaps = {(name, policy): order_effect(small, P, schedule, costs, policy, optimum=True)["gap"]
                for name, (schedule, costs) in SCENARIOS.items() for policy in POLICIES}
        for m in ms:
            work = skewed_workloads(n, m, sigma, seed)
            for name, (schedule, costs) in SCENARIOS.items():
                for policy in POLICIES:
                    eff = order_effect(work, P, schedule, costs, policy)
                    rows.append({"scenario": name, "policy": policy, "sigma": sigma, "m": m, "n": n,
                                 "gain": summarize(eff["gain"]), "mean_completion": summarize(eff["mean_completion"]),
                                 "m_opt": m_opt, "n_opt": n_opt, "gap_to_best": summarize(gaps[name, policy])})
    return rows


def number_list(kind):
    def parse(text: str) -> list:
        try:
            values = [kind(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__} values, got {text!r}") from None
        if not values or any(v <= 0 for v in values):
            raise argparse.ArgumentTypeError(f"expected positive values, got {text!r}")
        return values
    return parse


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="workloads per scenario (default 100)")
    ap.add_argument("--m", type=number_list(int), default=[8, 32],
                    help="micro-batches per workload, comma-separated (default 8,32)")
    ap.add_argument("--sigma", type=number_list(float), default=[0.25, 0.5, 1.0],
                    help="log-normal spreads of the micro-batch costs, comma-separated (default 0.25,0.5,1)")
    ap.add_argument("--n-opt", type=int, default=15, help="workloads per scenario for the optimum (default 15)")
    ap.add_argument("--m-opt", type=int, default=5, help="micro-batches when comparing with the optimum (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.n < 1 or args.n_opt < 1 or args.m_opt < 1:
        ap.error("--n, --n-opt and --m-opt must be positive")
    rows = study(args.n, args.m, args.sigma, args.n_opt, args.m_opt, args.seed)
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"policy vs FIFO, p={P}, {args.n} workloads per row; gain = (FIFO - policy) / FIFO makespan")
    print(f"{'scenario':<36} {'policy':<15} {'m':>3} {'sigma':>5} | {'min':>6} {'p10':>6} {'median':>6} {'p90':>6} "
          f"{'max':>6} | {'>=15%':>6} {'worse':>6} | {'mean-JCT':>8} | {'gap to best (m=' + str(args.m_opt) + ')':>20}")
    for r in rows:
        q, g, mc = r["gain"]["quantiles"], r["gain"], r["mean_completion"]["quantiles"]
        gap = r["gap_to_best"]["quantiles"]
        print(f"{r['scenario']:<36} {r['policy']:<15} {r['m']:>3} {r['sigma']:>5} | "
              + " ".join(f"{q[k]:>6.1%}" for k in q)
              + f" | {g['share_ge_15pct']:>6.0%} {g['share_negative']:>6.0%} | {mc['median']:>+8.1%} | "
              f"median {gap['median']:>5.1%} max {gap['max']:>5.1%}")
    print("mean-JCT: median change of the mean micro-batch completion time under the policy (+ = slower)")
    print(f"\n{TRAINING}: median gain over FIFO, heaviest-first / lightest-first (the claim says 15-30%)")
    by = {(r["policy"], r["m"], r["sigma"]): r["gain"] for r in rows if r["scenario"] == TRAINING}
    print(f"{'m':>4} " + " ".join(f"{'sigma=' + format(s, 'g'):>17}" for s in args.sigma))
    for m in args.m:
        print(f"{m:>4} " + " ".join(f"{by['heaviest-first', m, s]['quantiles']['median']:>8.1%} / "
                                    f"{by['lightest-first', m, s]['quantiles']['median']:<6.1%}" for s in args.sigma))
    print(f"elapsed {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
