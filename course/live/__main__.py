"""Run a schedule under torchrun (env:// rendezvous), e.g. on real machines:

    torchrun --nproc-per-node 4 -m course.live 1f1b -m 8 --emulate
    torchrun --nnodes 2 --nproc-per-node 8 ... -m course.live 1f1b -m 32 --backend nccl --device cuda

p is torchrun's world size; the other options are those of `python -m course live`.  Rank 0 prints the report.
The launcher's watchdog is not there: hangs end with the process group's timeout (--timeout).
"""

from __future__ import annotations

import os
import sys

from ..command import Parser, add_cost_args, costs_from_args, dumps, positive_int, run_guarded
from .options import add_live_args, options_from_args


def main(argv=None) -> int:
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print("error: run me under torchrun (RANK/WORLD_SIZE unset); without torchrun use "
              "`python -m course live SCHEDULE -p P -m M`", file=sys.stderr)
        return 2
    return run_guarded(_main, argv)


def _main(argv) -> int:
    parser = Parser(prog="torchrun ... -m course.live")
    parser.add_argument("schedule", metavar="SCHEDULE")
    parser.add_argument("-m", type=positive_int, required=True, help="micro-batches")
    parser.add_argument("-v", type=positive_int, help="chunks per rank, for schedules that take it")
    parser.add_argument("--force", action="store_true", help="accepted for symmetry with `python -m course live` "
                        "(torchrun places the processes itself: no size guard applies)")
    add_cost_args(parser)
    add_live_args(parser)
    args = parser.parse_args(argv)
    from ..schedules import build
    from .runner import finish, prepare
    from .worker import run_in_env

    plan = build(args.schedule, int(os.environ["WORLD_SIZE"]), args.m, v=args.v)
    options = options_from_args(args, costs_from_args(args, plan))
    run = prepare(plan, options)
    results = run_in_env(run.engine.worker, (run.job,), backend=options.backend, timeout=options.timeout)
    if results is None:     # not rank 0
        return 0
    result = finish(run, results)
    print(dumps(result.to_json()) if args.json else result.report(args.ascii))
    return 0 if result.grad_ok else 1


if __name__ == "__main__":
    sys.exit(main())
