"""The worker side of a job: process-group setup, a status slot the watchdog reads, and the torchrun entry.

A worker started by ``launch`` (forked by the zygote) runs ``main(JOBDIR, RANK)``: it reads the job (target,
arguments, world size, backend, the parent's TCPStore port and this job's key prefix) from JOBDIR, joins the
process group, calls ``target(rank, world_size, *args)`` and writes the return value (or its exception with the
traceback) back to JOBDIR.  It dies with the zygote that forked it (``die_with_parent``).  Under ``torchrun`` the same
target runs through ``run_in_env`` with env:// rendezvous instead, and dies with its torchrun agent.

The status slot is one fixed-size record per rank in a shared file (mmap): a state letter, a change counter and a
line of text such as "F1.s2: blocked in send of the activation for F1.s3 to rank 3".  Writing it costs a memcpy,
so the transport updates it around every blocking call; the parent reads it only when it suspects a hang.
"""

from __future__ import annotations

import datetime
import faulthandler
import mmap
import os
import pickle
import signal
import struct
import sys
import threading
import time
import traceback
from pathlib import Path

SLOT = 512          # bytes per rank in the status file
_HEAD = struct.Struct("<cI")   # state letter, change counter

# States: "i" starting (before the process group is up), "r" running, "w" waiting in a send/recv,
# "s" sleeping on purpose (emulated device time), "d" done.
STARTING, RUNNING, WAITING, SLEEPING, DONE = b"i", b"r", b"w", b"s", b"d"

_slot: mmap.mmap | None = None
_offset = 0
_seq = 0


def set_status(state: bytes, text: str = "") -> None:
    """Publish what this rank is doing (no-op outside a launched job, e.g. under torchrun)."""
    global _seq
    if _slot is None:
        return
    _seq += 1
    data = text.encode("utf-8", "replace")[: SLOT - _HEAD.size]
    _slot[_offset + _HEAD.size:_offset + SLOT] = data.ljust(SLOT - _HEAD.size, b"\0")
    _slot[_offset:_offset + _HEAD.size] = _HEAD.pack(state, _seq & 0xFFFFFFFF)


def read_status(path: Path, world_size: int) -> list[tuple[str, int, str]]:
    """[(state, counter, text)] per rank, read by the parent."""
    raw = Path(path).read_bytes()
    out = []
    for r in range(world_size):
        rec = raw[r * SLOT:(r + 1) * SLOT]
        state, seq = _HEAD.unpack_from(rec)
        out.append((state.decode(), seq, rec[_HEAD.size:].split(b"\0", 1)[0].decode("utf-8", "replace")))
    return out


PR_SET_PDEATHSIG = 1      # prctl option (linux/prctl.h): a signal for this process when its parent exits


def die_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` (the zygote that forked it) is gone, so a killed notebook kernel or
    CLI leaves no orphans: the kernel's parent-death signal on Linux, a thread that watches the parent elsewhere."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl failed")
    except (OSError, AttributeError):       # not Linux: poll
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:              # it died before the signal was armed
        os._exit(3)


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def _init_group(backend: str, rank: int, world_size: int, timeout: float, store=None) -> None:
    import torch.distributed as dist

    kw = dict(backend=backend, rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=timeout))
    if store is None:
        dist.init_process_group(init_method="env://", **kw)
    else:
        dist.init_process_group(store=store, **kw)


def _limit_threads() -> None:
    """P workers share the machine's cores: one intra-op thread each unless OMP_NUM_THREADS says otherwise
    (set explicitly: torch may have sized its pool before this process got its environment)."""
    import torch

    torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1") or 1)))


def main(jobdir: str, rank: int) -> None:
    global _slot, _offset
    jobdir_p = Path(jobdir)
    job = pickle.loads((jobdir_p / "job.pkl").read_bytes())
    world_size = job["world_size"]
    with open(jobdir_p / "status", "r+b") as f:
        _slot = mmap.mmap(f.fileno(), SLOT * world_size)
    _offset = rank * SLOT
    set_status(STARTING, "starting (importing torch, joining the process group)")
    stacks = open(jobdir_p / f"stack-{rank}.txt", "w")
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
    (jobdir_p / f"main-thread-{rank}").write_text(hex(threading.main_thread().ident))
    try:
        import torch.distributed as dist

        _limit_threads()
        if job["backend"] is not None:   # None: the target makes its own process group
            store = dist.PrefixStore(job["prefix"], dist.TCPStore("127.0.0.1", job["port"], world_size, is_master=False,
                                                                  timeout=datetime.timedelta(seconds=job["timeout"])))
            _init_group(job["backend"], rank, world_size, job["timeout"], store)
        set_status(RUNNING, "running")
        result = job["target"](rank, world_size, *job["args"])
        payload = pickle.dumps(("ok", result))
    except BaseException as e:  # noqa: BLE001  (SystemExit too: the parent must hear about it)
        err = {"rank": rank, "type": type(e).__name__, "message": str(e), "time": time.time(),
               "traceback": traceback.format_exc()}
        _write(jobdir_p / f"result-{rank}.pkl", pickle.dumps(("error", err)))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)   # skip gloo teardown: peers may be gone; the parent ends the job
    try:
        _write(jobdir_p / f"result-{rank}.pkl", payload)
    except Exception:  # noqa: BLE001
        pass
    set_status(DONE, "done")
    try:
        if dist.is_initialized():
            dist.destroy_process_group()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def run_in_env(calls, backend: str = "gloo", timeout: float = 300.0):
    """Run each ``(target, args)`` of ``calls`` in turn, ``target(rank, world_size, *args)``, in one process group
    set up by torchrun (env:// rendezvous).

    Yields, per call, the list of every rank's return value on rank 0 (gathered with gather_object), None
    elsewhere."""
    import torch.distributed as dist

    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    _limit_threads()
    _init_group(backend, rank, world_size, timeout)
    try:
        for target, args in calls:
            result = target(rank, world_size, *args)
            gathered = [None] * world_size if rank == 0 else None
            dist.gather_object(result, gathered, dst=0)
            yield gathered
    finally:
        dist.destroy_process_group()
