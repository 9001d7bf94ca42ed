"""`partition`: cut per-layer times into P contiguous stages (exact min-max, or the seed blog's greedy)."""

from __future__ import annotations

from .args import dumps, number_list, positive_int

MAX_DP_SECONDS = 60      # refuse a dynamic programme expected to run longer (--force runs it anyway)


def add_parser(sub):
    p = sub.add_parser("partition", help="cut layers into P contiguous stages minimising the slowest stage")
    p.add_argument("--layers", type=number_list, required=True, metavar="T1,T2,...",
                   help="per-layer times in model order, e.g. 3,1,1,1,1,4")
    p.add_argument("-p", type=positive_int, required=True, help="pipeline stages (<= number of layers)")
    p.add_argument("--method", choices=("dp", "greedy"), default="dp",
                   help="dp: exact min-max (default); greedy: the seed blog's cut-at-total/P heuristic")
    p.add_argument("--comm", type=number_list, default=0.0, metavar="C",
                   help="cost of one cut, paid by both stages beside it; a list gives one value per cut (L-1)")
    p.add_argument("--force", action="store_true", help=f"run a dynamic programme expected to take more than "
                   f"{MAX_DP_SECONDS} s")
    p.add_argument("--json", action="store_true", help="print {stages, stage_costs, bottleneck}")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..partition import partition

    layers = args.layers if isinstance(args.layers, list) else [args.layers]
    if args.method == "dp" and not args.force:
        # p * L steps of a numpy loop (a few microseconds each) over up to L candidates
        seconds = args.p * len(layers) * (5e-6 + 2e-9 * len(layers))
        if seconds > MAX_DP_SECONDS:
            raise ValueError(f"partition dp with p={args.p} and {len(layers)} layers needs about {seconds:.0f} s, "
                             f"above the limit of {MAX_DP_SECONDS} s; --force to run it anyway, or --method greedy")
    part = partition(layers, args.p, method=args.method, comm=args.comm)
    if args.json:
        print(dumps(part.to_json()))
        return 0
    for k, (stage, cost) in enumerate(zip(part.stages, part.stage_costs)):
        held = f"layers {stage[0]}..{stage[-1]}" if stage else "no layers"
        print(f"stage {k}: {held:<16} cost {cost:g}")
    print(f"bottleneck {part.bottleneck:g} ({args.method})")
    return 0
