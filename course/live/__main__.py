"""Run a schedule under torchrun (env:// rendezvous), e.g. on real machines:

    torchrun --nproc-per-node 4 -m course.live 1f1b -m 8 --emulate
    torchrun --nnodes 2 --nproc-per-node 8 ... -m course.live 1f1b -m 32 --backend nccl --device cuda

p is torchrun's world size; the other options are those of `python -m course live`.  Rank 0 prints the report.
The launcher's watchdog is not there: hangs end with the process group's timeout (--timeout).
"""

from __future__ import annotations

import json
import os
import sys

from ..cli import Parser, positive_int
from ..command import add_cost_args
from ..cli.live import add_live_args, live_kwargs, report
from .model import ModelConfig
from .runner import prepare
from .worker import run_in_env


def main(argv=None) -> int:
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print("error: run me under torchrun (RANK/WORLD_SIZE unset); without torchrun use "
              "`python -m course live SCHEDULE -p P -m M`", file=sys.stderr)
        return 2
    parser = Parser(prog="torchrun ... -m course.live")
    parser.add_argument("schedule", metavar="SCHEDULE")
    parser.add_argument("-m", type=positive_int, required=True, help="micro-batches")
    parser.add_argument("-v", type=positive_int, help="chunks per rank, for schedules that take it")
    add_cost_args(parser)
    add_live_args(parser)
    args = parser.parse_args(argv)
    from ..schedules import build

    plan = build(args.schedule, int(os.environ["WORLD_SIZE"]), args.m, v=args.v)
    kw = live_kwargs(args)
    cfg = ModelConfig(kw.pop("width"), kw.pop("blocks_per_stage"))
    timeout = kw.pop("timeout")
    target, job, collect = prepare(plan, cfg=cfg, **kw)
    results = run_in_env(target, (job,), backend=args.backend, timeout=timeout)
    if results is not None:   # rank 0
        result = collect(results)
        print(json.dumps(result.to_json()) if args.json else report(result, args.ascii))
        return 0 if result.grad_ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
