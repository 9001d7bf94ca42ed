"""`search`: the best plan for given costs under a per-rank activation cap (heuristic, or exact with CP-SAT)."""

from __future__ import annotations

from .args import dumps, finite_float, number_list, output_file, positive_int, write_file


def add_parser(sub):
    p = sub.add_parser("search", help="search the best plan under a per-rank activation cap (heuristic or exact)")
    p.add_argument("-p", type=positive_int, required=True, help="pipeline ranks, one stage each (>= 1)")
    p.add_argument("-m", type=positive_int, required=True, help="micro-batches (>= 1)")
    costs = p.add_argument_group("costs (one rank's share of the model; lists give one value per stage)")
    costs.add_argument("--f", type=number_list, default=1.0, help="forward time (default 1)")
    costs.add_argument("--b", type=number_list, default=1.0, help="input-gradient time B (default 1)")
    costs.add_argument("--w", type=number_list, default=1.0, help="weight-gradient time W (default 1)")
    costs.add_argument("--comm", type=finite_float, default=0.0, help="point-to-point latency (default 0)")
    costs.add_argument("--w-mem", type=finite_float, default=1.0, help="the share of a micro-batch's activations "
                       "held from B until its W (B frees 1 - W_MEM, W frees W_MEM; default 1)")
    p.add_argument("--max-activations", type=number_list, metavar="K",
                   help="per-rank cap, in micro-batch activations of that rank's stage (the unit of "
                        "peak_activations); one value or one per rank (default: no cap)")
    p.add_argument("--exact", action="store_true", help="CP-SAT: prove optimality, or return the best plan and "
                   "the solver's lower bound when the time limit ends first")
    p.add_argument("--time-limit", type=finite_float, metavar="S", help="seconds for --exact (required when "
                   "p x m > 48)")
    p.add_argument("--workers", type=positive_int, default=2, help="CP-SAT workers (default 2)")
    p.add_argument("--plan-out", metavar="FILE", type=output_file, help="write the plan file (one line of ops per rank)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..costs import Costs
    from ..search import search

    if args.time_limit is not None and not args.exact:
        raise ValueError("--time-limit applies to --exact only")
    if args.time_limit is not None and args.time_limit <= 0:
        raise ValueError(f"--time-limit must be a positive number of seconds, got {args.time_limit:g}")
    if not 0 <= args.w_mem <= 1:
        raise ValueError(f"--w-mem must lie in [0, 1], got {args.w_mem:g}")
    for name in ("f", "b", "w"):
        vals = getattr(args, name)
        if isinstance(vals, list) and len(vals) != args.p:
            raise ValueError(f"--{name} lists {len(vals)} values but -p is {args.p}: give one value or {args.p}")
    if args.comm < 0:
        raise ValueError(f"--comm must be non-negative, got {args.comm:g}")
    costs = Costs(f=args.f, b=args.b, w=args.w, comm=args.comm, w_mem=args.w_mem)
    result = search(args.p, args.m, costs, args.max_activations, exact_method=args.exact,
                    time_limit=args.time_limit, workers=args.workers)
    if args.plan_out:
        write_file(args.plan_out, (result.plan.format() + "\n").encode())
    if args.json:
        print(dumps(result.to_json()))
        return 0
    print(result.plan.format())
    proof = "proven optimal" if result.optimal else f"within {result.gap:.1%} of the lower bound"
    print(f"{result.method}: p={args.p} m={args.m} makespan {result.makespan:g}, lower bound "
          f"{result.lower_bound:g} ({proof}), peak activations {[round(x, 4) for x in result.peak_activations]}, "
          f"{result.seconds:.2f} s")
    if args.plan_out:
        print(f"wrote {args.plan_out}")
    return 0
