"""`plan`: print a schedule's per-rank op strings."""

from __future__ import annotations

import json

from . import positive_int


def add_parser(sub):
    p = sub.add_parser("plan", help="print a schedule's plan: one line of ops per rank")
    add_schedule_args(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help='print {"ranks": [[op, ...], ...], ...}')
    out.add_argument("--torch", action="store_true", help="print torch.distributed.pipelining's CSV form "
                     "(one row per rank, actions such as 0F2, 1I0, 1W0), ready for _load_csv")
    p.set_defaults(run=run)


def add_schedule_args(p) -> None:
    """SCHEDULE -p P -m M [-v V]: shared by plan, sim and live."""
    p.add_argument("schedule", metavar="SCHEDULE", nargs="?", help="schedule name (see `schedules`)")
    p.add_argument("-p", type=positive_int, help="pipeline ranks (>= 1)")
    p.add_argument("-m", type=positive_int, help="micro-batches (>= 1)")
    p.add_argument("-v", type=positive_int, help="chunks per rank, for schedules that take it")


def build_plan(args):
    from ..schedules import build

    if not args.schedule:
        raise ValueError("name a schedule (see `python -m course schedules`)")
    if args.p is None or args.m is None:
        raise ValueError(f"{args.schedule} needs -p P and -m M (positive integers)")
    return build(args.schedule, args.p, args.m, v=args.v)


def run(args) -> int:
    plan = build_plan(args)
    if args.json:
        print(json.dumps(plan.to_json()))
    elif args.torch:
        from ..torch_bridge import to_csv
        print(to_csv(plan), end="")
    else:
        print(plan.format())
    return 0
