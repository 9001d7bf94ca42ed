"""The arguments every subcommand shares: number types, cost flags, SCHEDULE -p -m -v or --plan FILE, size guards.

The number types and cost flags are defined one floor down, in ``course.command``, because the torchrun entry
(``python -m course.live``) reads them too and the runtime does not import the CLI; they are re-exported here so
that a subcommand finds all its helpers in one module.
"""

from __future__ import annotations

import os
import re
import stat

from ..command import (
    add_cost_args,
    check_finite,
    check_ops,
    costs_from_args,
    dumps,
    finite_float,
    number_list,
    output_file,
    positive_int,
    write_output,
)

MAX_PLAN_FILE = 64 * 2 ** 20     # bytes; a plan file is text, one token per op (--force reads a bigger one)
MAX_OP_NUMBER = 2 ** 31          # micro-batch and stage numbers stay below this (no override: they index arrays)
_NUMBERS = re.compile(r"[FBWI]([0-9]+)(?:\.s([0-9]+))?")


def add_schedule_args(parser, *, plan_file: bool = True) -> None:
    """SCHEDULE -p P -m M [-v V] [--plan FILE] [--force]: shared by plan, sim, live and the analyses."""
    parser.add_argument("schedule", metavar="SCHEDULE", nargs="?", help="schedule name (see `schedules`)")
    parser.add_argument("-p", type=positive_int, help="pipeline ranks (>= 1)")
    parser.add_argument("-m", type=positive_int, help="micro-batches (>= 1)")
    parser.add_argument("-v", type=positive_int, help="chunks per rank, for schedules that take it")
    if plan_file:
        parser.add_argument("--plan", metavar="FILE", help="a plan file instead of a named schedule: one line of "
                            "ops per rank (e.g. 'F0 F1 B0 B1'); rank r runs stage r unless ops are annotated (F0.s4)")
    parser.add_argument("--force", action="store_true", help="go beyond the size guards (plan size against "
                        "memory, plan file size, live processes against cores, live model against memory)")


def plan_from_args(args):
    """The plan SCHEDULE -p -m -v or --plan FILE names (exactly one of the two)."""
    if getattr(args, "plan", None):
        if args.schedule:
            raise ValueError("give either SCHEDULE or --plan FILE, not both")
        return load_plan(args)
    return build_plan(args)


def build_plan(args):
    """Build the named schedule, after checking that its plan (times --iterations) fits in memory."""
    from ..schedules import build

    if not args.schedule:
        raise ValueError("name a schedule (see `python -m course schedules`)")
    if args.p is None or args.m is None:
        raise ValueError(f"{args.schedule} needs -p P and -m M (positive integers)")
    ops = ops_per_rank_and_microbatch(args.schedule, args.v) * args.p * args.m * getattr(args, "iterations", 1)
    check_ops(f"{args.schedule} p={args.p} m={args.m}" + _times(args), ops, args.force, args.p)
    return build(args.schedule, args.p, args.m, v=args.v)


def ops_per_rank_and_microbatch(schedule: str, v: int | None) -> float:
    """Ops (those inside F&B pairs counted one by one) per rank and micro-batch, read off the same schedule built
    small (p=4, m=16: at least its large-m value for every schedule of the registry), or the bound 3 kinds (F, B,
    W) x v chunks (V shapes: 2) when that small instance cannot be built."""
    from ..plan import ops_of
    from ..schedules import build

    if v is None or v <= 8:
        try:
            probe = build(schedule, 4, 16, v=v)
            return sum(len(ops_of(step)) for rank in probe.ranks for step in rank) / (4 * 16)
        except ValueError:
            pass
    return 3 * (v or 2)


def load_plan(args):
    """Read --plan FILE: a regular file of bounded size whose op numbers fit, that checks against -p and -m."""
    from ..plan import Plan

    path = args.plan
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"plan file {path!r} not found") from None
    except OSError as e:
        raise ValueError(f"plan file {path!r}: {e.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"plan file {path!r} is not a regular file")
    if info.st_size > MAX_PLAN_FILE and not args.force:
        raise ValueError(f"plan file {path!r} has {info.st_size / 2 ** 20:.0f} MiB, above the limit of "
                         f"{MAX_PLAN_FILE // 2 ** 20} MiB; --force to read it anyway")
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"plan file {path!r} is not UTF-8 text") from None
    except OSError as e:
        raise ValueError(f"plan file {path!r}: {e.strerror}") from None
    mb, stage = _largest_numbers(text)
    if max(mb, stage) >= MAX_OP_NUMBER:
        big = str(max(mb, stage))
        raise ValueError(f"plan file {path!r}: op number {big if len(big) < 20 else big[:16] + '...'} overflows "
                         f"(micro-batch and stage numbers must be below {MAX_OP_NUMBER})")
    m = args.m or mb + 1
    lines = sum(1 for ln in text.splitlines() if ln.split("#", 1)[0].strip())
    check_ops(f"plan file {path!r} (m={m}" + _times(args) + ")", 3 * m * max(stage + 1, lines)
              * getattr(args, "iterations", 1), args.force, lines)
    name = os.path.splitext(os.path.basename(path))[0]
    plan = Plan.parse(text, num_microbatches=args.m, name=name)
    if args.p is not None and args.p != plan.p:
        raise ValueError(f"-p {args.p} but the plan file has {plan.p} rank lines")
    return plan


def _largest_numbers(text: str) -> tuple[int, int]:
    """The largest micro-batch and stage numbers in a plan's ops (comments skipped)."""
    mb = stage = 0
    for line in text.splitlines():
        for m in _NUMBERS.finditer(line.split("#", 1)[0]):
            mb = max(mb, _number(m.group(1)))
            stage = max(stage, _number(m.group(2) or "0"))
    return mb, stage


def _number(digits: str) -> int:
    """int(digits), except that a number too long to matter is read as its first 20 digits (int() refuses
    strings of thousands of digits)."""
    return int(digits[:20])


def _times(args) -> str:
    k = getattr(args, "iterations", 1)
    return f" x {k} iterations" if k > 1 else ""


__all__ = ["add_cost_args", "add_schedule_args", "build_plan", "check_finite", "check_ops", "costs_from_args",
           "dumps", "finite_float", "load_plan", "number_list", "ops_per_rank_and_microbatch", "output_file",
           "plan_from_args", "positive_int", "write_output", "MAX_PLAN_FILE", "MAX_OP_NUMBER"]
