"""The `course` command line.  Each subcommand is a module here with ``add_parser(subparsers)`` and
``run(args) -> int``; bad arguments exit 2 with one line that says what was wrong and what is allowed."""

from __future__ import annotations

import argparse
import importlib
import sys

# Subcommand modules, in the order `--help` lists them.
COMMANDS = ("schedules", "plan", "sim", "live", "partition", "order", "search")


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exits 2."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> Parser:
    parser = Parser(prog="python -m course", description="Pipeline-parallelism course: simulate, run and study "
                    "pipeline schedules.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f".{name}", __name__).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.run(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ValueError as e:   # PlanError, DeadlockError and argument checks are ValueErrors
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:   # `... | head`
        return 0


def number_list(text: str) -> float | list[float]:
    """'2' -> 2.0; '1,2,3' -> [1.0, 2.0, 3.0] (per-stage values)."""
    try:
        vals = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or a comma-separated list of numbers, got {text!r}")
    if any(v < 0 for v in vals):
        raise argparse.ArgumentTypeError(f"expected non-negative values, got {text!r}")
    return vals[0] if len(vals) == 1 else vals


def positive_int(text: str) -> int:
    try:
        val = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    if val < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer (>= 1), got {val}")
    return val
