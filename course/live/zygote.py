"""A warm process that forks workers: torch is imported once per session instead of once per worker.

Importing torch takes seconds (far more when P workers do it at once on two cores).  The launcher keeps one
zygote per parent process (``python -m course.live.zygote``); it imports torch and the runtime, then forks a
worker for every request line ``{"jobdir", "rank", "pgid", "path", "cwd"}`` on stdin and answers with the pid.
Workers of one job share a process group (the first worker's pid) so the launcher can end them together.  The
zygote exits when its stdin closes (the parent exited, or was killed before it could clean up): it first removes
the job directories that are still there, and its workers, whose parent-death signal fires, follow it.
It never runs torch code itself, so forking it is safe.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys

PRELOAD = ("torch", "torch.distributed", "torch.distributed.pipelining",
           # autograd imports this (and sympy) on the first backward with an explicit gradient: 3 s on a busy laptop
           "torch.fx.experimental.symbolic_shapes",
           "course.live.executor", "course.live.model", "course.live.torch_engine", "course.live.torch_runtime")


def _child(req: dict, zygote: int) -> None:
    from . import worker

    worker.die_with_parent(zygote)
    try:
        os.setpgid(0, req["pgid"] or 0)
    except OSError:
        pass
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(os.path.join(req["jobdir"], f"out-{req['rank']}.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.dup2(out, 2)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sys.path[:] = req["path"]
    os.chdir(req["cwd"])
    os.environ.update(req.get("env", {}))
    worker.main(req["jobdir"], req["rank"])
    os._exit(0)


def main() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # workers are reaped automatically
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # a notebook "interrupt" or Ctrl-C stops the caller, not me
    print("ready", flush=True)
    jobdirs = set()
    for line in sys.stdin:
        req = json.loads(line)
        jobdirs.add(req["jobdir"])
        pid = os.fork()
        if pid == 0:
            try:
                _child(req, os.getppid())
            finally:
                os._exit(1)
        try:
            os.setpgid(pid, req["pgid"] or pid)
        except OSError:
            pass
        print(pid, flush=True)
    # The parent is gone.  A parent that ended normally removed its job directories; one that was killed did not.
    for path in jobdirs:
        if os.path.basename(path).startswith("course-live-"):
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
