"""The `course` command line.  Each subcommand is a module here with ``add_parser(subparsers)`` and
``run(args) -> int``; the arguments they share are in ``args``.  Bad input exits 2 with one line that says what was
wrong and what is allowed; Ctrl-C prints "interrupted" and exits 130 (see ``course.command`` for every status)."""

from __future__ import annotations

import importlib
import sys

from ..command import Parser, UsageError, run_guarded  # noqa: F401  (UsageError: part of this API)
from .args import number_list, positive_int  # noqa: F401  (re-exported for subcommands written before args)

# Subcommand modules, in the order `--help` lists them.
COMMANDS = ("schedules", "plan", "sim", "live", "partition", "order", "memory", "search")


def build_parser(commands: tuple[str, ...] = COMMANDS) -> Parser:
    """The parser of ``commands`` (default: all of them)."""
    parser = Parser(prog="python -m course", description="Pipeline-parallelism course: simulate, run and study "
                    "pipeline schedules.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in commands:
        importlib.import_module(f".{name}", __name__).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_guarded(_main, argv)


def _main(argv) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # A run names its subcommand first: declaring that one alone spares importing what the others need to declare
    # their flags (the live options, the ordering policies, the search).  --help or a typo gets every command.
    args = build_parser(tuple(argv[:1]) if argv[:1] and argv[0] in COMMANDS else COMMANDS).parse_args(argv)
    return args.run(args)
