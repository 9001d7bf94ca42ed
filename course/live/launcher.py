"""Start P worker processes in one process group, watch them, and bring back results or a clear failure.

Works the same from a script, from pytest and from a Jupyter kernel: workers are forked by a warm helper process
(``zygote.py``, torch already imported) and import the target by reference, so the target must live in an
importable module (not in a notebook cell).  Rendezvous uses a TCPStore the parent opens once on 127.0.0.1 with a
free port chosen by the OS (each job under its own key prefix).  All workers share one process group
(``os.killpg``), so ending a job leaves nothing behind; the job directory goes on every exit path (and if the parent
is killed outright, the zygote removes it and its workers follow it).

The parent watches four things:
- a worker that raised: its rank and traceback come back as ``WorkerError``;
- a worker that died without a result (crash, ``os._exit``): ``WorkerError`` with the tail of its stderr;
- every unfinished worker stuck: blocked in communication (its status slot says so, or, for code that does not
  report, it burnt no CPU) with no change for ``stall`` seconds: ``DeadlockDetected``; where one of them is
  stopped (SIGSTOP, a debugger) instead, ``WorkerStopped`` names it, whatever its status slot last said;
- the wall-clock ``timeout``: ``JobTimeout``.
The last two report per rank what it was doing: the status line and the innermost frames of its Python stack.
"""

from __future__ import annotations

import datetime
import json
import os
import pickle
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..validation import check_counts, check_positive_number
from . import worker

POLL_S = 0.05
ZYGOTE_START_S = 300.0   # importing torch in the zygote: seconds normally, minutes on a very busy machine


class LiveError(RuntimeError):
    """Something went wrong in a live job (base class)."""


class WorkerError(LiveError):
    """A worker raised or died.  ``rank``, ``exc_type``, ``message`` and ``traceback`` (text) say which and how."""

    def __init__(self, rank: int, exc_type: str, message: str, traceback: str):
        self.rank, self.exc_type, self.message, self.traceback = rank, exc_type, message, traceback
        super().__init__(f"rank {rank} failed: {exc_type}: {message}\n--- traceback of rank {rank} ---\n"
                         f"{traceback.rstrip()}")


class JobTimeout(LiveError):
    """The job did not finish in time.  ``states[rank]`` says what each unfinished rank was doing;
    ``stacks[rank]`` holds its Python stack (main thread); ``elapsed`` is the seconds until detection."""

    def __init__(self, message: str, states: dict[int, str], stacks: dict[int, str], elapsed: float):
        self.states, self.stacks, self.elapsed = states, stacks, elapsed
        lines = "\n".join(f"  rank {r}: {s}" for r, s in sorted(states.items()))
        super().__init__(f"{message}\n{lines}")


class DeadlockDetected(JobTimeout):
    """Every unfinished rank was blocked in communication and nothing moved for ``stall`` seconds."""


class WorkerStopped(JobTimeout):
    """A rank has been stopped (SIGSTOP, a debugger) for ``stall`` seconds and every other unfinished rank was
    stuck meanwhile: the job cannot move until the stopped one is continued."""


class _Store:
    """One TCPStore per parent process on 127.0.0.1, port picked by the OS (no race with other jobs); each job
    works under its own key prefix.  Kept for the process's life: no server start and teardown per job."""

    store = None

    @classmethod
    def port(cls) -> int:
        if cls.store is None:
            import torch.distributed as dist

            cls.store = dist.TCPStore("127.0.0.1", 0, None, is_master=True, wait_for_workers=False,
                                      timeout=datetime.timedelta(seconds=300))
        return cls.store.port


class _Zygote:
    """The warm forking process (see zygote.py); one per parent process, restarted if it died."""

    proc: subprocess.Popen | None = None
    lock = threading.Lock()   # one request/answer at a time, whichever thread launches

    @classmethod
    def fork(cls, jobdir: Path, rank: int, pgid: int) -> int:
        with cls.lock:
            return cls._fork(jobdir, rank, pgid)

    @classmethod
    def _fork(cls, jobdir: Path, rank: int, pgid: int) -> int:
        if cls.proc is None or cls.proc.poll() is not None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p or os.getcwd() for p in sys.path))
            env.setdefault("OMP_NUM_THREADS", "1")
            cls.proc = subprocess.Popen([sys.executable, "-m", "course.live.zygote"], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1)
            if cls._answer(ZYGOTE_START_S) != "ready":
                raise LiveError("the worker zygote (python -m course.live.zygote) failed to start")
        req = {"jobdir": str(jobdir), "rank": rank, "pgid": pgid, "cwd": os.getcwd(),
               "path": [str(p) or os.getcwd() for p in sys.path],
               "env": {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "PYTHONUNBUFFERED": "1"}}
        try:
            cls.proc.stdin.write(json.dumps(req) + "\n")
            cls.proc.stdin.flush()
            answer = cls._answer(30.0)
        except BaseException:     # e.g. Ctrl-C between request and answer: the answer would be read by the next job
            cls._close()
            raise
        if not answer.isdigit():
            raise LiveError(f"the worker zygote did not fork a worker (answered {answer!r})")
        return int(answer)

    @classmethod
    def _answer(cls, timeout: float) -> str:
        """The zygote's next line, or '' after ``timeout`` s (then the zygote is replaced on the next call)."""
        ready, _, _ = select.select([cls.proc.stdout], [], [], timeout)
        line = cls.proc.stdout.readline().strip() if ready else ""
        if not line:
            cls._close()
        return line

    @classmethod
    def _close(cls) -> None:
        """End the zygote: closing its stdin lets it remove leftover job directories; kill it if it lingers."""
        proc, cls.proc = cls.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


def stray_workers() -> list[int]:
    """Pids of worker processes still running (there should be none between jobs)."""
    z = _Zygote.proc
    if z is None or z.poll() is not None:
        return []
    try:
        import psutil

        return [c.pid for c in psutil.Process(z.pid).children(recursive=True) if c.status() != "zombie"]
    except Exception:  # noqa: BLE001  (no psutil: fall back to /proc)
        return [int(d) for d in os.listdir("/proc") if d.isdigit() and _parent(int(d)) == z.pid and _alive(int(d))]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _exists(pid: int) -> bool:
    """The process is there, a zombie included (a killed process lingers briefly until it is reaped)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _state(pid: int) -> str:
    """The process's state letter from /proc (R running, S sleeping, T stopped, t traced, Z zombie; '' unknown)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _alive(pid: int) -> bool:
    """The process is there and not a zombie (the zygote reaps its children, but be safe)."""
    return _exists(pid) and _state(pid) != "Z"


def _stopped(pid: int) -> bool:
    """Stopped by a signal (SIGSTOP, SIGTSTP) or held by a debugger: it runs no code until continued."""
    return _state(pid) in ("T", "t")


def _check_target(target) -> None:
    mod = getattr(target, "__module__", None)
    if not callable(target) or mod in (None, "__main__") or "<locals>" in getattr(target, "__qualname__", ""):
        raise ValueError(f"target {target!r} must be a function defined at the top level of an importable module "
                         "(a .py file), not in __main__ or a notebook cell: workers are fresh processes that "
                         "import it by name")


def launch(target, world_size: int, args=(), timeout: float = 60.0, backend: str | None = "gloo", *,
           stall: float | None = 3.0, echo: bool = True) -> list:
    """Run ``target(rank, world_size, *args)`` on ``world_size`` processes in one initialised process group
    (``backend=None``: none, the target makes its own, as live-1f1b's relay does).

    Returns each rank's return value (list indexed by rank).  Raises ``WorkerError`` (a rank raised or died),
    ``DeadlockDetected`` (all unfinished ranks blocked for ``stall`` s; ``stall=None`` turns this off) or
    ``JobTimeout`` (``timeout`` s of wall clock).  Whatever happens, no worker process survives the call.
    ``echo`` prints what workers wrote to stdout/stderr (prefixed by rank) when the job succeeds.
    """
    check_counts(world_size=world_size)
    check_positive_number("timeout", timeout, "seconds")
    if stall is not None:
        check_positive_number("stall", stall, "seconds")
    if backend not in ("gloo", "nccl", None):
        raise ValueError(f"backend must be 'gloo', 'nccl' or None, got {backend!r}")
    _check_target(target)
    jobdir = Path(tempfile.mkdtemp(prefix="course-live-"))
    job = {"target": target, "args": tuple(args), "world_size": world_size, "backend": backend,
           "port": _Store.port() if backend else None, "prefix": f"{jobdir.name}/", "timeout": timeout}
    try:
        (jobdir / "job.pkl").write_bytes(pickle.dumps(job))
    except Exception as e:  # noqa: BLE001  (pickling the learner's objects can raise anything)
        shutil.rmtree(jobdir, ignore_errors=True)
        raise ValueError(f"cannot send the target and its arguments to the workers (pickle failed): {e}") from None
    (jobdir / "status").write_bytes(b"\0" * (worker.SLOT * world_size))
    pids: list[int] = []
    try:
        for rank in range(world_size):
            pids.append(_Zygote.fork(jobdir, rank, pids[0] if pids else 0))
        _watch(pids, jobdir, world_size, timeout, stall)
        results = [_read_result(jobdir, r) for r in range(world_size)]
        if echo:
            _echo(jobdir, world_size)
        return results
    finally:
        _kill(pids)
        shutil.rmtree(jobdir, ignore_errors=True)


def _kill(pids: list[int]) -> None:
    """SIGKILL the job's process group (and each worker, in case one left it), then wait until all are gone."""
    if not pids:
        return
    try:
        os.killpg(pids[0], signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + 10   # until the kernel has removed them (a killed zombie lingers briefly)
    while any(_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def _cpu_seconds(pid: int) -> float | None:
    try:
        import psutil

        t = psutil.Process(pid).cpu_times()
        return t.user + t.system
    except Exception:  # noqa: BLE001  (no psutil, or the process is gone)
        return None


def _outcome(jobdir: Path, rank: int, pid: int) -> str:
    """'running', 'ok', 'error' (raised) or 'died' (ended without a result)."""
    if _alive(pid):
        return "running"
    path = jobdir / f"result-{rank}.pkl"
    if not path.exists():
        return "died"
    return "error" if pickle.loads(path.read_bytes())[0] == "error" else "ok"


def _watch(pids, jobdir: Path, world_size: int, timeout: float, stall: float | None) -> None:
    t0 = time.monotonic()
    # Per rank: (status counter, cpu seconds, time of the last change) for hang detection.
    last: dict[int, tuple[int, float | None, float]] = {}
    while True:
        outcome = [_outcome(jobdir, r, pid) for r, pid in enumerate(pids)]
        if any(o in ("error", "died") for o in outcome):
            raise _first_failure(pids, jobdir)
        if all(o == "ok" for o in outcome):
            return
        now = time.monotonic()
        if now - t0 > timeout:
            states, stacks = _snapshot(pids, jobdir, world_size)
            raise JobTimeout(f"the job did not finish within {timeout:g} s; what each unfinished rank was doing:",
                             states, stacks, now - t0)
        if stall is not None:
            status = worker.read_status(jobdir / "status", world_size)
            stuck = []
            for r, pid in enumerate(pids):
                if outcome[r] != "running":
                    continue
                state, seq, _ = status[r]
                cpu = _cpu_seconds(pid)
                prev = last.get(r)
                moved = prev is None or prev[0] != seq or (cpu is not None and prev[1] is not None
                                                           and cpu - prev[1] > 0.05)
                if moved:
                    last[r] = (seq, cpu, now)
                # Waiting in a send/recv counts after `stall` s without change; code that does not report its
                # state ("r") only if it also burnt no CPU meanwhile; a stopped process whatever its slot says.
                # Sleeping and starting never count.
                quiet = now - last[r][2] >= stall
                stuck.append(quiet and (state == "w" or (state == "r" and cpu is not None) or _stopped(pid)))
            if stuck and all(stuck):
                states, stacks = _snapshot(pids, jobdir, world_size)
                stopped = [r for r, pid in enumerate(pids) if outcome[r] == "running" and _stopped(pid)]
                if stopped:
                    raise WorkerStopped(f"rank {', '.join(map(str, stopped))} stopped (SIGSTOP or a debugger), "
                                        f"and no unfinished rank has moved for {stall:g} s (detected after "
                                        f"{now - t0:.1f} s); where each rank is:", states, stacks, now - t0)
                raise DeadlockDetected(f"deadlock: every unfinished rank has been blocked for {stall:g} s "
                                       f"(detected after {now - t0:.1f} s); where each rank is stuck:",
                                       states, stacks, now - t0)
        time.sleep(POLL_S)


def _first_failure(pids, jobdir: Path) -> WorkerError:
    """The root cause among failed ranks: a rank that died without a word (its peers then fail on the broken
    connection), else the earliest exception (later ones are usually peers losing their partner)."""
    time.sleep(0.3)   # let near-simultaneous failures write their reports
    errors = []
    for r, pid in enumerate(pids):
        o = _outcome(jobdir, r, pid)
        if o == "error":
            err = pickle.loads((jobdir / f"result-{r}.pkl").read_bytes())[1]
            errors.append((err["time"], WorkerError(r, err["type"], err["message"], err["traceback"])))
        elif o == "died":
            errors.append((float("-inf"), _died(jobdir, r)))
    errors.sort(key=lambda e: (e[0], e[1].rank))
    return errors[0][1]


def _died(jobdir: Path, rank: int) -> WorkerError:
    return WorkerError(rank, "ProcessDied", "the worker process ended without reporting a result (crash, "
                       "os._exit or a signal)", f"(last output of rank {rank})\n{_tail(jobdir / f'out-{rank}.txt')}")


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_bytes()[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


def _read_result(jobdir: Path, rank: int):
    path = jobdir / f"result-{rank}.pkl"
    if not path.exists():
        raise _died(jobdir, rank)
    kind, value = pickle.loads(path.read_bytes())
    if kind == "error":
        raise WorkerError(rank, value["type"], value["message"], value["traceback"])
    return value


def _echo(jobdir: Path, world_size: int) -> None:
    for r in range(world_size):
        text = _tail(jobdir / f"out-{r}.txt", 20000).rstrip()
        if text:
            print("\n".join(f"[rank {r}] {line}" for line in text.splitlines()))


_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')


def _snapshot(pids, jobdir: Path, world_size: int) -> tuple[dict[int, str], dict[int, str]]:
    """Status line and Python stack of every unfinished rank (stacks via faulthandler on SIGUSR1)."""
    alive = [r for r, pid in enumerate(pids) if _alive(pid)]
    for r in alive:
        try:
            os.kill(pids[r], signal.SIGUSR1)
        except ProcessLookupError:
            pass
    time.sleep(0.3)
    status = worker.read_status(jobdir / "status", world_size)
    states, stacks = {}, {}
    for r in alive:
        stack = _main_stack(jobdir, r)
        stacks[r] = stack
        state, _, text = status[r]
        where = _where(stack)
        if _stopped(pids[r]):        # its stack cannot be dumped until it runs again
            states[r] = f"stopped (SIGSTOP or a debugger; SIGCONT resumes it); last status: {text or 'none'}"
        elif state == "w" and text:
            states[r] = text + (f" [{where}]" if where else "")
        elif state == "i":
            states[r] = "still starting (importing torch or joining the process group)"
        else:
            states[r] = f"in {where}" if where else (text or "running")
    return states, stacks


def _main_stack(jobdir: Path, rank: int) -> str:
    """The main thread's part of the faulthandler dump."""
    try:
        dump = (jobdir / f"stack-{rank}.txt").read_text(errors="replace")
        ident = int((jobdir / f"main-thread-{rank}").read_text(), 16)
    except (OSError, ValueError):
        return ""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", dump.strip())
    for b in blocks:
        m = re.match(r"(?:Current thread|Thread) (0x[0-9a-f]+)", b)
        if m and int(m.group(1), 16) == ident:
            return b
    return blocks[-1] if blocks else ""


def _where(stack: str) -> str:
    """'send() at distributed_c10d.py:2345, called from mycode.py:12 in run_rank' from a stack dump."""
    # most recent call first; the relay's own frames (live-1f1b's process group) are the library's, not the caller's
    frames = [f for f in _FRAME.findall(stack) if not f[0].endswith(os.path.join("live", "relay.py"))]
    if not frames:
        return ""
    lib = next((f for f in frames if "torch" in f[0] and "distributed" in f[0]), None)
    user = next((f for f in frames if "torch" not in f[0]), None)
    parts = []
    if lib:
        parts.append(f"torch.distributed {lib[2]}() at {Path(lib[0]).name}:{lib[1]}")
    top = frames[0]
    if not lib:
        parts.append(f"{top[2]}() at {Path(top[0]).name}:{top[1]}")
    if user and user is not top:
        parts.append(f"called from {Path(user[0]).name}:{user[1]} in {user[2]}")
    return ", ".join(parts)
