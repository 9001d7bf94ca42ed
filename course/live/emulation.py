"""Emulated device time (``--emulate``): a laptop shows the timeline a cluster would.

Two thin wrappers, applied only when emulating, so the executor and the transports never ask whether they are:

- ``padded(compute, seconds)``: each step lasts at least its modelled duration (``Costs.durations`` x unit).
- ``Stamped(transport, latency, now)``: every message carries the time it was sent in one extra row; the receiver
  holds it until that time + the modelled latency, as the simulator does.  Sends leave after the step's padding, so
  a consumer cannot start early.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from ..lower import Action
from .worker import SLEEPING, set_status


def padded(compute: Callable, seconds: dict) -> Callable:
    """``compute(step)``, then sleep until the step has lasted ``seconds[step]``."""
    def run(step) -> None:
        start = time.perf_counter()
        compute(step)
        left = start + seconds[step] - time.perf_counter()
        if left > 0:
            set_status(SLEEPING, f"{step}: padding to its modelled duration")
            time.sleep(left)
    return run


class Stamped:
    """A transport whose messages arrive ``latency`` seconds after they were sent (``now``: the rank's clock, in
    seconds since the iteration's common start).  The inner transport moves one row more than the model's
    activation: ``stamped_shape``."""

    def __init__(self, inner, latency: float, now: Callable[[], float]):
        self.inner, self.latency, self.now = inner, latency, now

    @staticmethod
    def stamped_shape(shape: tuple) -> tuple:
        return (shape[0] + 1, *shape[1:])

    def post(self, action: Action) -> None:
        self.inner.post(action)

    def send(self, action: Action, tensor: torch.Tensor) -> None:
        self.inner.send(action, torch.cat([torch.full_like(tensor[:1], self.now()), tensor]))

    def recv(self, action: Action) -> torch.Tensor:
        buf = self.inner.recv(action)
        ready = buf[0, 0].item() + self.latency - self.now()
        if ready > 0:
            set_status(SLEEPING, f"{action.op}: {action.message} is in flight (emulated latency)")
            time.sleep(ready)
        return buf[1:].clone()   # its own storage: the stamp row is not part of the activation

    def drain(self) -> None:
        self.inner.drain()
