"""`plan`: print a schedule's per-rank op strings, or (``--comms``) its lowering into compute, send and receive."""

from __future__ import annotations

from .args import add_schedule_args, build_plan, dumps


def add_parser(sub):
    p = sub.add_parser("plan", help="print a schedule's plan: one line of ops per rank")
    add_schedule_args(p, plan_file=False)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help='print {"ranks": [[op, ...], ...], ...}')
    out.add_argument("--torch", action="store_true", help="print torch.distributed.pipelining's CSV form "
                     "(one row per rank, actions such as 0F2, 1I0, 1W0), ready for _load_csv")
    p.add_argument("--comms", action="store_true", help="the plan lowered to what each rank does: compute, "
                   "send(F0->r1), recv(B0<-r1) (course.lower); with --json as objects, with --torch as torch's "
                   "compute_comms CSV (0SEND_F0, 1RECV_F0)")
    p.set_defaults(run=run)


def run(args) -> int:
    plan = build_plan(args)
    if args.torch:
        from ..torch_bridge import to_actions_with_comms, to_csv
        if args.comms:
            print("\n".join(",".join(row) for row in to_actions_with_comms(plan)))
        else:
            print(to_csv(plan), end="")
    elif args.comms:
        from ..lower import format_actions, lower
        lowered = lower(plan.validate())
        if args.json:
            print(dumps({**plan.to_json(), "actions": [[a.to_json() for a in row] for row in lowered]}))
        else:
            print(format_actions(lowered, plan))
    elif args.json:
        print(dumps(plan.to_json()))
    else:
        print(plan.format())
    return 0
