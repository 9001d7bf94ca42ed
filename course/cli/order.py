"""`order`: choose the order in which uneven micro-batches enter the pipeline, evaluated by simulation."""

from __future__ import annotations

import json

from . import number_list, positive_int


def add_parser(sub):
    from ..ordering import POLICIES, schedule_names

    p = sub.add_parser("order", help="order micro-batches of uneven cost (fifo, heaviest-first, johnson, best)")
    p.add_argument("--costs", type=number_list, required=True, metavar="C1,...,CM",
                   help="per-micro-batch cost multipliers, e.g. 1,3,2,1 (m = how many)")
    p.add_argument("-p", type=positive_int, required=True, help="pipeline ranks")
    p.add_argument("--policy", choices=POLICIES, default="fifo",
                   help="fifo (default), heaviest-first, lightest-first, johnson (p=2 only), best (m <= 9)")
    p.add_argument("--schedule", choices=schedule_names(), default="1f1b", metavar="SCHEDULE",
                   help="1f1b (default), gpipe, forward (forward pass only) or any schedule name")
    p.add_argument("--f", type=number_list, default=1.0, help="forward time per stage (default 1; list: per stage)")
    p.add_argument("--b", type=number_list, default=1.0, help="input-gradient time B (default 1)")
    p.add_argument("--w", type=number_list, default=1.0, help="weight-gradient time W (default 1)")
    p.add_argument("--comm", type=float, default=0.0, help="point-to-point latency between ranks (default 0)")
    p.add_argument("--json", action="store_true", help="print {order, makespan, ...}")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..costs import Costs
    from ..ordering import order_microbatches

    scales = args.costs if isinstance(args.costs, list) else [args.costs]
    result = order_microbatches(scales, args.p, policy=args.policy, schedule=args.schedule,
                                costs=Costs(f=args.f, b=args.b, w=args.w, comm=args.comm))
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    print(f"order {' '.join(map(str, result.order))}")
    print(f"makespan {result.makespan:g}  mean completion {result.mean_completion:g}  "
          f"({args.policy}, {args.schedule}, p={args.p}, m={len(scales)})")
    return 0
