"""The kernel manager for running notebooks headless: ``course.book`` (the chapters) and nbgrader's autograde
(``course.autograde``).

jupyter_client's asyncio channels wait for a kernel's message with one ``socket.poll(timeout)``.  pyzmq's asyncio
poll watches the socket's edge-triggered ``ZMQ_FD``; when that edge is consumed before the event loop sees it
(anything that reads ``zmq.EVENTS`` on the socket does, pyzmq#2173), the message sits in the socket and the poll
notices it only when its timeout fires.  nbclient waits for a cell's reply with the cell's whole time limit, so on a
loaded machine a finished cell now and then looked like a 300 s stall.  ``SlicedPoll`` waits in one-second slices:
each new poll asks the socket first, so a missed wake-up costs at most a second.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type

SLICE_S = 1.0


class SlicedPoll(AsyncZMQSocketChannel):
    """A channel whose ``get_msg`` polls in slices of ``SLICE_S`` up to its timeout (None: no limit)."""

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE_S if deadline is None else max(0.0, deadline - time.monotonic())
            if await self.socket.poll(int(min(SLICE_S, left) * 1000)):
                return await self._recv()
            if deadline is not None and left <= SLICE_S:
                raise Empty


class KernelClient(AsyncKernelClient):
    shell_channel_class = Type(SlicedPoll)
    iopub_channel_class = Type(SlicedPoll)
    stdin_channel_class = Type(SlicedPoll)
    control_channel_class = Type(SlicedPoll)


class KernelManager(AsyncKernelManager):
    client_class = DottedObjectName("course.kernels.KernelClient")
    client_factory = Type(KernelClient, klass=AsyncKernelClient)
