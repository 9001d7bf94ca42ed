"""How one rank's tensors reach the others: the seam between the executor and torch.distributed.

The executor runs a lowered plan (course/lower.py) and hands every SEND and RECV action to a transport:

    post(action)            be ready to receive the RECV's message (called for every RECV before the iteration)
    recv(action) -> tensor  the message, in its own storage on the compute device
    send(action, tensor)    hand the tensor to ``action.peer``
    drain()                 return once every send has been received

A RECV's tag names its message, so a receiver gets exactly the tensor its op needs whatever order messages arrive
in (gloo honours tags).  NCCL ignores tags and matches per peer in posting order, which ``lower`` makes safe: per
pair of ranks, receives are posted in the order the peer sends.

Two transports:

- ``Posted`` (the default): every receive is posted up front (``irecv``) and every send is an ``isend``, so any
  valid order runs.  On NCCL, receives are posted at the op instead: NCCL queues a pair's sends and receives on one
  stream, so receives posted ahead would hold up the sends behind them.  (The NCCL path with p >= 2 needs two
  GPUs and has not been run yet: ``benchmarks/gpu_check.sh`` checks it, messages above NCCL's buffer included.)
- ``Blocking`` (``--blocking-send``, the teaching mode): ``send`` and ``recv`` block at the op, the textbook
  mistake that makes 1F1B deadlock (``course.lower.blocking_deadlock`` predicts where).

Both publish where the rank waits (``Action.describe``) for the launcher's watchdog.  Emulated latency wraps
either one (emulation.py).  Gloo moves CPU tensors: with GPU compute, messages are staged through host memory.

Change the transport: write a class with these four methods (see ``Posted``) and return it from
``make_transport``; tests/test_live.py's parity tests then run every schedule over it.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from ..lower import Action
from .emulation import Stamped
from .worker import RUNNING, WAITING, set_status


class Posted:
    """Non-blocking: receives posted ahead (at the op on NCCL), asynchronous sends."""

    def __init__(self, shape: tuple, dtype, device: torch.device, comm_device: torch.device, ahead: bool = True):
        self.shape, self.dtype, self.device, self.comm_device, self.ahead = shape, dtype, device, comm_device, ahead
        self.posted: dict[Action, tuple] = {}     # receive -> (work, buffer)
        self.sends: list[tuple] = []              # outstanding isends: (work, buffer)

    def post(self, action: Action) -> None:
        if self.ahead:
            self._irecv(action)

    def _irecv(self, action: Action) -> None:
        buf = torch.empty(self.shape, dtype=self.dtype, device=self.comm_device)
        self.posted[action] = (dist.irecv(buf, action.peer, tag=action.tag), buf)

    def recv(self, action: Action) -> torch.Tensor:
        if action not in self.posted:
            self._irecv(action)
        work, buf = self.posted.pop(action)
        set_status(WAITING, action.describe())
        work.wait()
        set_status(RUNNING, f"received {action.message}")
        return buf.to(self.device)

    def send(self, action: Action, tensor: torch.Tensor) -> None:
        buf = tensor.detach().to(self.comm_device).contiguous()
        self.sends.append((dist.isend(buf, action.peer, tag=action.tag), buf))

    def drain(self) -> None:
        set_status(WAITING, "all steps done: waiting for outstanding sends to be received")
        for work, _ in self.sends:
            work.wait()
        self.sends.clear()


class Blocking:
    """Blocking ``send``/``recv`` at the op: a send returns once the peer has taken it."""

    def __init__(self, shape: tuple, dtype, device: torch.device, comm_device: torch.device):
        self.shape, self.dtype, self.device, self.comm_device = shape, dtype, device, comm_device

    def post(self, action: Action) -> None:
        pass

    def recv(self, action: Action) -> torch.Tensor:
        buf = torch.empty(self.shape, dtype=self.dtype, device=self.comm_device)
        set_status(WAITING, action.describe())
        dist.recv(buf, action.peer, tag=action.tag)
        set_status(RUNNING, f"received {action.message}")
        return buf.to(self.device)

    def send(self, action: Action, tensor: torch.Tensor) -> None:
        set_status(WAITING, action.describe())
        dist.send(tensor.detach().to(self.comm_device).contiguous(), action.peer, tag=action.tag)
        set_status(RUNNING, f"sent {action.message}")

    def drain(self) -> None:
        pass


def make_transport(options, shape: tuple, device: torch.device, now):
    """The transport ``options`` ask for, moving tensors of ``shape`` (the model's activation) to and from
    ``device``; with ``emulate``, wrapped to hold each message for the modelled latency (``now``: the rank's
    clock)."""
    comm_device = device if options.backend == "nccl" else torch.device("cpu")
    dtype = options.model.torch_dtype
    wire = Stamped.stamped_shape(shape) if options.emulate else shape
    if options.blocking_send:
        plain = Blocking(wire, dtype, device, comm_device)
    else:
        plain = Posted(wire, dtype, device, comm_device, ahead=options.backend != "nccl")
    return Stamped(plain, options.latency_s, now) if options.emulate else plain
