"""`partition`: cut per-layer times into P contiguous stages (exact min-max, or the seed blog's greedy)."""

from __future__ import annotations

import json

from . import number_list, positive_int


def add_parser(sub):
    p = sub.add_parser("partition", help="cut layers into P contiguous stages minimising the slowest stage")
    p.add_argument("--layers", type=number_list, required=True, metavar="T1,T2,...",
                   help="per-layer times in model order, e.g. 3,1,1,1,1,4")
    p.add_argument("-p", type=positive_int, required=True, help="pipeline stages (<= number of layers)")
    p.add_argument("--method", choices=("dp", "greedy"), default="dp",
                   help="dp: exact min-max (default); greedy: the seed blog's cut-at-total/P heuristic")
    p.add_argument("--comm", type=number_list, default=0.0, metavar="C",
                   help="cost of one cut, paid by both stages beside it; a list gives one value per cut (L-1)")
    p.add_argument("--json", action="store_true", help="print {stages, stage_costs, bottleneck}")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..partition import partition

    layers = args.layers if isinstance(args.layers, list) else [args.layers]
    part = partition(layers, args.p, method=args.method, comm=args.comm)
    if args.json:
        print(json.dumps(part.to_json()))
        return 0
    for k, (stage, cost) in enumerate(zip(part.stages, part.stage_costs)):
        held = f"layers {stage[0]}..{stage[-1]}" if stage else "no layers"
        print(f"stage {k}: {held:<16} cost {cost:g}")
    print(f"bottleneck {part.bottleneck:g} ({args.method})")
    return 0
