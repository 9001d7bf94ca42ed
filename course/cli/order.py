"""`order`: choose the order in which uneven micro-batches enter the pipeline, evaluated by simulation."""

from __future__ import annotations

from .args import (
    add_cost_args,
    check_finite,
    check_ops,
    costs_from_args,
    dumps,
    number_list,
    ops_per_rank_and_microbatch,
    positive_int,
)


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
    add_cost_args(p, omit=("mb_scale",))
    p.add_argument("--force", action="store_true", help="go beyond the size guard (plan size against memory)")
    p.add_argument("--json", action="store_true", help="print {order, makespan, ...}")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..ordering import order_microbatches

    scales = args.costs if isinstance(args.costs, list) else [args.costs]
    per_pair = ops_per_rank_and_microbatch("gpipe" if args.schedule == "forward" else args.schedule, None)
    check_ops(f"order p={args.p} m={len(scales)}", per_pair * args.p * len(scales), args.force, args.p)
    result = order_microbatches(scales, args.p, policy=args.policy, schedule=args.schedule,
                                costs=costs_from_args(args))
    check_finite(result.makespan, "the makespan")
    if args.json:
        print(dumps(result.to_json()))
        return 0
    print(f"order {' '.join(map(str, result.order))}")
    print(f"makespan {result.makespan:g}  mean completion {result.mean_completion:g}  "
          f"({args.policy}, {args.schedule}, p={args.p}, m={len(scales)})")
    return 0
