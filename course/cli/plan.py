"""`plan`: print a schedule's per-rank op strings."""

from __future__ import annotations

from .args import add_schedule_args, build_plan, dumps


def add_parser(sub):
    p = sub.add_parser("plan", help="print a schedule's plan: one line of ops per rank")
    add_schedule_args(p, plan_file=False)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help='print {"ranks": [[op, ...], ...], ...}')
    out.add_argument("--torch", action="store_true", help="print torch.distributed.pipelining's CSV form "
                     "(one row per rank, actions such as 0F2, 1I0, 1W0), ready for _load_csv")
    p.set_defaults(run=run)


def run(args) -> int:
    plan = build_plan(args)
    if args.json:
        print(dumps(plan.to_json()))
    elif args.torch:
        from ..torch_bridge import to_csv
        print(to_csv(plan), end="")
    else:
        print(plan.format())
    return 0
