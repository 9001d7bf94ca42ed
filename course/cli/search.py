"""`search`: the best plan for given costs under a per-rank activation cap (heuristic, or exact with CP-SAT)."""

from __future__ import annotations

import argparse

from .args import (
    add_cost_args,
    costs_from_args,
    dumps,
    finite_float,
    number_list,
    output_file,
    positive_int,
    write_output,
)

DESCRIPTION = """\
The shortest plan with one stage per rank (split backward) under a per-rank activation cap, minimising one
iteration's makespan.

What is proven and what is heuristic:
  lower bound   always proven, from the costs and the cap (per rank: earliest start + all its work; the last
                forward's round trip; the forwards that must follow the first B under the cap)
  optimal       true only when the plan's makespan meets that bound; otherwise the gap is printed
  heuristic     (default) the plan is the best of list scheduling (eight variants), the Zero Bubble paper's
                automatic scheduler (its eight variants) and ZB-H1 / ZB-H2 where they fit the cap (plans up to
                12,000 ops), improved by moves on its critical path: never longer than any of them, not claimed
                optimal unless the gap is 0
  --exact       CP-SAT: the optimum, proven; with --time-limit, the best plan found and the solver's proven bound
                (costs finer than 1/1000 are rounded for the solver: optimal then means the simulated makespan
                meets the bound proven on the real costs)
"""


def add_parser(sub):
    p = sub.add_parser("search", help="search the best plan under a per-rank activation cap (heuristic or exact)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-p", type=positive_int, required=True, help="pipeline ranks, one stage each (>= 1)")
    p.add_argument("-m", type=positive_int, required=True, help="micro-batches (>= 1)")
    add_cost_args(p, omit=("act", "mb_scale", "overlap"))
    p.add_argument("--max-activations", type=number_list, metavar="K",
                   help="per-rank cap, in micro-batch activations of that rank's stage (the unit of "
                        "peak_activations); one value or one per rank (default: no cap)")
    p.add_argument("--exact", action="store_true", help="CP-SAT: prove optimality, or return the best plan and "
                   "the solver's lower bound when the time limit ends first")
    p.add_argument("--time-limit", type=finite_float, metavar="S", help="seconds for --exact (required when "
                   "p x m > 48)")
    p.add_argument("--workers", type=positive_int, default=2, help="CP-SAT workers (default 2)")
    p.add_argument("--plan-out", metavar="FILE", type=output_file,
                   help="write the plan file (one line of ops per rank)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..search import search

    if args.time_limit is not None and not args.exact:
        raise ValueError("--time-limit applies to --exact only")
    for name in ("f", "b", "w"):         # Costs would also take a divisor of p values (one per group of stages)
        vals = getattr(args, name)
        if isinstance(vals, list) and len(vals) != args.p:
            raise ValueError(f"--{name} lists {len(vals)} values but -p is {args.p}: give one value or {args.p}")
    costs = costs_from_args(args)
    result = search(args.p, args.m, costs, args.max_activations, exact_method=args.exact,
                    time_limit=args.time_limit, workers=args.workers)
    if args.plan_out:
        write_output(args.plan_out, (result.plan.format() + "\n").encode())
    if args.json:
        print(dumps(result.to_json()))
        return 0
    print(result.plan.format())
    proof = "proven optimal" if result.optimal else f"within {result.gap:.1%} of the lower bound"
    print(f"{result.method}: p={args.p} m={args.m} makespan {result.makespan:g}, lower bound "
          f"{result.lower_bound:g} ({proof}), peak activations {[round(x, 4) for x in result.peak_activations]}, "
          f"{result.seconds:.2f} s")
    return 0
