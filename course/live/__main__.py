"""Run schedules under torchrun (env:// rendezvous), on one machine or several:

    torchrun --nproc-per-node 4 -m course.live 1f1b -m 8 --emulate
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:PORT --rdzv-id JOB \\
        -m course.live 1f1b zb-h1 -m 32 --backend nccl --device cuda

p is torchrun's world size; several schedules run one after the other in the same process group; the other
options are those of `python -m course live`.  Rank 0 prints one report per schedule (the first line on stderr says
when each starts).  The launcher's watchdog is not there: a rank whose peer is gone (a killed process or agent, a
lost node) fails on the broken connection with one line, and a hang ends with the process group's timeout
(--timeout).  Each worker dies with its torchrun agent, so an agent killed outright leaves no worker behind.
"""

from __future__ import annotations

import os
import sys
from contextlib import closing

from ..command import Parser, add_cost_args, costs_from_args, dumps, positive_int, run_guarded
from .options import add_live_args, options_from_args
from .worker import die_with_parent


def main(argv=None) -> int:
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print("error: run me under torchrun (RANK/WORLD_SIZE unset); without torchrun use "
              "`python -m course live SCHEDULE -p P -m M`", file=sys.stderr)
        return 2
    die_with_parent(os.getppid())           # the torchrun agent: killed outright, it takes this worker along
    return run_guarded(_main, argv)


def _main(argv) -> int:
    parser = Parser(prog="torchrun ... -m course.live")
    parser.add_argument("schedules", metavar="SCHEDULE", nargs="+", help="schedules to run, one after the other")
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

    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    runs = []
    for name in args.schedules:             # every plan checked before any rank joins the group
        plan = build(name, world_size, args.m, v=args.v)
        runs.append(prepare(plan, options_from_args(args, costs_from_args(args, plan))))
    options = runs[0].options
    ok = True
    try:
        with closing(run_in_env([(run.engine.worker, (run.job,)) for run in runs], options.backend,
                                options.timeout)) as results:
            for run in runs:
                if rank == 0:                # a wrapper's sign that the job is under way
                    print(f"course.live: running {run.plan.name} p={run.plan.p} m={run.plan.m}", file=sys.stderr,
                          flush=True)
                got = next(results)
                if got is not None:          # rank 0
                    result = finish(run, got)
                    print(dumps(result.to_json()) if args.json else result.report(args.ascii), flush=True)
                    ok = ok and result.grad_ok
    except RuntimeError as e:                # torch.distributed's errors: a peer gone, a timeout
        print(f"error: rank {rank} of {world_size}: {type(e).__name__}: {str(e).strip().splitlines()[0]} (another "
              "rank, its agent or its node ended or cannot be reached)", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
