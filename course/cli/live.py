"""`live`: run a schedule on P real processes (gloo by default), check gradients, compare with the simulator."""

from __future__ import annotations

from .args import add_cost_args, add_schedule_args, costs_from_args, dumps, output_file, plan_from_args, write_output


def add_parser(sub):
    from ..live.options import add_live_args  # torch-free: the options module imports no torch

    p = sub.add_parser("live", help="run a schedule on P gloo processes: gradient check, measured vs simulated")
    add_schedule_args(p)
    add_cost_args(p)
    add_live_args(p)
    p.add_argument("--trace", metavar="FILE", type=output_file, help="also write the measured timeline as Chrome "
                   "trace-event JSON (Perfetto, chrome://tracing), with each rank's measured saved-tensor bytes")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..live import DeadlockDetected, LiveError, run_plan
    from ..live.options import options_from_args

    plan = plan_from_args(args)
    options = options_from_args(args, costs_from_args(args, plan))
    try:
        result = run_plan(plan, options=options)
    except LiveError as e:
        if args.json:
            print(dumps({"schedule": plan.name, "p": plan.p, "m": plan.m, "error": type(e).__name__,
                         "message": str(e).splitlines()[0], "deadlock": isinstance(e, DeadlockDetected),
                         "states": {str(r): s for r, s in getattr(e, "states", {}).items()},
                         "rank": getattr(e, "rank", None)}))
        else:
            print(f"error: {e}")
        return 1
    if args.trace:
        from ..trace import chrome_trace
        saved = result.meta.get("saved_bytes")           # measured by the course engine only
        trace = chrome_trace(result.timeline, saved, "saved for backward (bytes)" if saved else None)
        write_output(args.trace, dumps(trace).encode())
    print(dumps(result.to_json()) if args.json else result.report(args.ascii))
    return 0 if result.grad_ok else 1
