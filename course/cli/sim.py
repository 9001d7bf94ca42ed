"""`sim`: simulate a schedule (or a plan file) and print metrics, an ASCII timeline, JSON or a PNG."""

from __future__ import annotations

import json
from pathlib import Path

from . import number_list, positive_int
from .plan import add_schedule_args, build_plan


def add_parser(sub):
    p = sub.add_parser("sim", help="simulate a schedule or a plan file")
    add_schedule_args(p)
    p.add_argument("--plan", metavar="FILE", help="simulate a plan file instead: one line of ops per rank "
                   "(e.g. 'F0 F1 B0 B1'); rank r runs stage r unless ops are annotated (F0.s4)")
    costs = p.add_argument_group("costs (one rank's share of the model; lists give one value per stage)")
    costs.add_argument("--f", type=number_list, default=1.0, help="forward time (default 1)")
    costs.add_argument("--b", type=number_list, default=1.0, help="input-gradient time B (default 1); "
                       "a full backward costs B + W")
    costs.add_argument("--w", type=number_list, default=1.0, help="weight-gradient time W (default 1)")
    costs.add_argument("--comm", type=float, default=0.0, help="point-to-point latency between ranks (default 0)")
    costs.add_argument("--act", type=number_list, default=1.0, help="activation memory per micro-batch (default 1)")
    costs.add_argument("--mb-scale", type=number_list, help="per-micro-batch cost multipliers, e.g. 1,2,1,1")
    costs.add_argument("--overlap", type=float, default=1.0, help="an overlapped F&B step (dualpipe, dualpipev) "
                       "lasts OVERLAP x (F + B); below 1 models hidden communication (default 1)")
    costs.add_argument("--w-mem", type=float, default=1.0, help="split backward: the share of a micro-batch's "
                       "activations still held after B until its W (B frees 1 - W_MEM, W frees W_MEM; default 1)")
    steps = p.add_argument_group("several optimizer steps")
    steps.add_argument("--iterations", type=positive_int, default=1, metavar="K",
                       help="simulate K iterations back to back and report the steady-state period (default 1)")
    steps.add_argument("--no-sync", action="store_true", help="no barrier between iterations (post-validation): "
                       "a stage starts the next iteration once its own previous work is done")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--ascii", action="store_true", help="print an ASCII timeline")
    out.add_argument("--png", metavar="FILE", help="write a Gantt chart and the memory plot to FILE")
    p.set_defaults(run=run)


def costs_from_args(args):
    from ..costs import Costs

    scale = args.mb_scale
    if isinstance(scale, float):
        scale = [scale]
    return Costs(f=args.f, b=args.b, w=args.w, comm=args.comm, act=args.act, mb_scale=scale, overlap=args.overlap,
                 w_mem=args.w_mem)


def load_plan(args):
    from ..plan import Plan

    path = Path(args.plan)
    if not path.is_file():
        raise ValueError(f"plan file {args.plan!r} not found")
    plan = Plan.parse(path.read_text(), num_microbatches=args.m, name=path.stem)
    if args.p is not None and args.p != plan.p:
        raise ValueError(f"-p {args.p} but the plan file has {plan.p} rank lines")
    return plan


def run(args) -> int:
    from ..iterations import simulate_iterations

    if args.plan and args.schedule:
        raise ValueError("give either SCHEDULE or --plan FILE, not both")
    plan = load_plan(args) if args.plan else build_plan(args)
    costs = costs_from_args(args)
    runs = simulate_iterations(plan, costs, args.iterations, sync=not args.no_sync)
    tl = runs.timeline
    if args.json:
        print(json.dumps({"schedule": args.schedule or args.plan, "p": plan.p, "m": plan.m,
                          "v": args.v or max(len(s) for s in plan.placement),
                          **{k: v for k, v in tl.summary().items() if k not in ("name", "unit")},
                          "iterations": runs.iterations, "period": runs.period}))
    elif args.png:
        import matplotlib
        matplotlib.use("Agg")
        from ..plots import compare
        compare([tl], memory_too=True).savefig(args.png, dpi=120)
        print(f"wrote {args.png}")
    elif args.ascii:
        from ..plots import ascii_timeline
        print(ascii_timeline(tl))
    else:
        print(f"{tl.name}: p={plan.p} m={plan.m} makespan {tl.makespan:g}, bubble {tl.bubble_ratio:.1%}")
        print(f"busy {[round(x, 4) for x in tl.busy]}")
        print(f"idle {[round(x, 4) for x in tl.idle]}")
        print(f"peak activations {[round(x, 4) for x in tl.peak_activations]}")
        if runs.iterations > 1:
            barrier = "no barrier (post-validation)" if args.no_sync else "a barrier between iterations"
            print(f"{runs.iterations} iterations with {barrier}: steady-state period {runs.period:g} per iteration")
    return 0
