"""`live`: run a schedule on P real processes (gloo by default), check gradients, compare with the simulator."""

from __future__ import annotations

from .args import add_cost_args, add_schedule_args, costs_from_args, dumps, finite_float, plan_from_args, positive_int


def add_parser(sub):
    p = sub.add_parser("live", help="run a schedule on P gloo processes: gradient check, measured vs simulated")
    add_schedule_args(p)
    add_cost_args(p)
    add_live_args(p)
    p.set_defaults(run=run)


def add_live_args(p) -> None:
    """Everything after SCHEDULE -p -m -v (shared with `torchrun -m course.live`)."""
    p.add_argument("--emulate", action="store_true", help="pad every op to its modelled duration so the measured "
                   "timeline can be compared with the simulator's")
    p.add_argument("--unit-ms", type=finite_float, default=20.0, metavar="MS",
                   help="milliseconds per cost unit when emulating (default 20)")
    p.add_argument("--engine", choices=("course", "torch"), default="course",
                   help="course: this runtime; torch: torch.distributed.pipelining's schedule class")
    p.add_argument("--blocking-send", action="store_true", help="teaching mode: blocking send/recv at each op "
                   "(1F1B deadlocks; the watchdog reports where each rank is stuck)")
    p.add_argument("--backend", choices=("gloo", "nccl"), default="gloo", help="process-group backend")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where stages compute (cuda: one GPU per rank, round-robin)")
    p.add_argument("--width", type=positive_int, default=16, help="hidden width of the Linear+Tanh blocks")
    p.add_argument("--blocks", type=positive_int, default=2, help="blocks per stage (chunk)")
    p.add_argument("--timeout", type=finite_float, default=60.0, help="seconds before the job is ended (default 60)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--ascii", action="store_true", help="also print the measured timeline as ASCII")


def live_kwargs(args, plan=None) -> dict:
    if args.unit_ms <= 0:
        raise ValueError(f"--unit-ms must be positive, got {args.unit_ms:g}")
    if args.timeout <= 0:
        raise ValueError(f"--timeout must be positive, got {args.timeout:g}")
    if args.backend == "nccl" and args.device != "cuda":
        raise ValueError("--backend nccl needs --device cuda (NCCL moves GPU tensors only)")
    return dict(costs=costs_from_args(args, plan), emulate=args.emulate, unit_ms=args.unit_ms,
                blocking_send=args.blocking_send, engine=args.engine, backend=args.backend, device=args.device,
                width=args.width, blocks_per_stage=args.blocks, timeout=args.timeout)


def report(result, ascii_timeline: bool = False) -> str:
    t, s = result.timeline, result.simulated
    lines = [f"{result.plan.name} p={result.plan.p} m={result.plan.m}: engine {result.engine}, "
             + (f"emulated device time ({result.unit_ms:g} ms per cost unit)" if result.emulate else "no emulation"),
             f"gradients: {'OK' if result.grad_ok else 'MISMATCH'} (max abs error {result.max_abs_err:.2e}, "
             f"tolerance {result.tolerance:g})",
             f"loss: {sum(result.losses) / len(result.losses):.6f}" if result.losses else "loss: n/a"]
    if result.emulate:
        lines.append(f"makespan: measured {result.measured_makespan:.3f} s, simulated "
                     f"{result.simulated_makespan:.3f} s (measured/simulated {result.ratio:.2f})")
    else:
        lines.append(f"makespan: measured {result.measured_makespan:.4f} s; simulated {s.makespan:g} cost units "
                     "(use --emulate to compare in seconds)")
    lines.append(f"bubble ratio: measured {t.bubble_ratio:.1%}, simulated {s.bubble_ratio:.1%}")
    if ascii_timeline:
        from ..plots import ascii_timeline as draw
        lines += ["measured timeline:", draw(t), "simulated timeline:", draw(s)]
    return "\n".join(lines)


def run(args) -> int:
    from ..live import DeadlockDetected, LiveError, run_plan

    plan = plan_from_args(args)
    try:
        result = run_plan(plan, **live_kwargs(args, plan))
    except LiveError as e:
        if args.json:
            print(dumps({"schedule": plan.name, "p": plan.p, "m": plan.m, "error": type(e).__name__,
                              "message": str(e).splitlines()[0], "deadlock": isinstance(e, DeadlockDetected),
                              "states": {str(r): s for r, s in getattr(e, "states", {}).items()},
                              "rank": getattr(e, "rank", None)}))
        else:
            print(f"error: {e}")
        return 1
    print(dumps(result.to_json()) if args.json else report(result, args.ascii))
    return 0 if result.grad_ok else 1
