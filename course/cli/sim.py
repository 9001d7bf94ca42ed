"""`sim`: simulate a schedule (or a plan file) and print metrics, an ASCII timeline, JSON or a PNG."""

from __future__ import annotations

from .args import (
    add_cost_args,
    add_schedule_args,
    check_finite,
    costs_from_args,
    dumps,
    output_file,
    plan_from_args,
    positive_int,
    write_output,
)


def add_parser(sub):
    p = sub.add_parser("sim", help="simulate a schedule or a plan file")
    add_schedule_args(p)
    add_cost_args(p)
    steps = p.add_argument_group("several optimizer steps")
    steps.add_argument("--iterations", type=positive_int, default=1, metavar="K",
                       help="simulate K iterations back to back and report the steady-state period (default 1)")
    steps.add_argument("--no-sync", action="store_true", help="no barrier between iterations (post-validation): "
                       "a stage starts the next iteration once its own previous work is done")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--ascii", action="store_true", help="print an ASCII timeline")
    out.add_argument("--png", metavar="FILE", type=output_file, help="write a Gantt chart and the memory plot "
                     "to FILE")
    p.add_argument("--trace", metavar="FILE", type=output_file, help="also write a Chrome trace-event JSON "
                   "(Perfetto, chrome://tracing): a track per rank, activations as a counter")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..fast import gc_paused

    with gc_paused():     # 10^5 ops and spans without cycles, freed when this returns: collecting only rescans them
        return _run(args)


def _run(args) -> int:
    from ..iterations import simulate_iterations

    plan = plan_from_args(args)
    costs = costs_from_args(args, plan)
    runs = simulate_iterations(plan, costs, args.iterations, sync=not args.no_sync)
    tl = runs.timeline
    check_finite(tl.makespan, "the makespan")
    if args.trace:
        from ..trace import chrome_trace
        write_output(args.trace, dumps(chrome_trace(tl)).encode())
    if args.json:
        print(dumps({"schedule": args.schedule or args.plan, "p": plan.p, "m": plan.m,
                     "v": args.v or max(len(s) for s in plan.placement),
                     **{k: v for k, v in tl.summary().items() if k not in ("name", "unit")},
                     "iterations": runs.iterations, "period": runs.period}))
    elif args.png:
        import io

        import matplotlib
        matplotlib.use("Agg")
        from ..plots import compare
        png = io.BytesIO()       # rendered first, written in one call: matplotlib hides a full disk on close
        compare([tl], memory_too=True).savefig(png, format="png", dpi=120)
        write_output(args.png, png.getvalue())
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
