"""course.kernels: a kernel's message that pyzmq's asyncio poll was not woken for is still read within a slice, not
when the wait's timeout fires (what made a finished chapter cell look like a 300 s stall)."""

from __future__ import annotations

import asyncio
import time
from queue import Empty

import pytest
import zmq
import zmq.asyncio
from jupyter_client.session import Session

from course.autograde import JailedKernelManager
from course.kernels import SLICE_S, KernelManager, SlicedPoll


async def _reply_behind_a_consumed_edge(timeout: float) -> float:
    """Seconds until SlicedPoll.get_msg returns a reply whose ZMQ_FD edge was consumed before the loop saw it."""
    ctx, sync_ctx = zmq.asyncio.Context(), zmq.Context()
    receiver = ctx.socket(zmq.PAIR)
    port = receiver.bind_to_random_port("tcp://127.0.0.1")
    sender = sync_ctx.socket(zmq.PAIR)
    sender.connect(f"tcp://127.0.0.1:{port}")
    session = Session()
    try:
        channel = SlicedPoll(receiver, session)
        t0 = time.monotonic()
        waiting = asyncio.ensure_future(channel.get_msg(timeout=timeout))
        await asyncio.sleep(0.2)                       # the poll now waits on the receiver's FD
        session.send(sender, "execute_reply", {"status": "ok"})
        time.sleep(0.3)                                # the reply is queued; the loop has not run
        zmq.Socket.shadow(receiver.underlying).get(zmq.EVENTS)   # reading EVENTS consumes the edge
        msg = await waiting
        assert msg["msg_type"] == "execute_reply"
        return time.monotonic() - t0
    finally:
        sender.close(0)
        receiver.close(0)
        sync_ctx.term()
        ctx.term()


def test_a_reply_the_poll_was_not_woken_for_is_read_within_a_slice():
    # jupyter_client's own channel returns this reply only when the 60 s run out
    assert asyncio.run(_reply_behind_a_consumed_edge(timeout=60)) < 60 / 4


def test_the_timeout_still_holds_when_nothing_comes():
    async def wait_for_nothing() -> float:
        ctx = zmq.asyncio.Context()
        socket = ctx.socket(zmq.PAIR)
        socket.bind_to_random_port("tcp://127.0.0.1")
        try:
            t0 = time.monotonic()
            with pytest.raises(Empty):
                await SlicedPoll(socket, Session()).get_msg(timeout=2.5 * SLICE_S)
            return time.monotonic() - t0
        finally:
            socket.close(0)
            ctx.term()

    assert asyncio.run(wait_for_nothing()) >= 2.5 * SLICE_S


@pytest.mark.parametrize("manager", [KernelManager, JailedKernelManager])
def test_the_chapters_and_the_autograder_read_every_channel_in_slices(manager):
    client = manager(kernel_name="python3").client()
    for name in ("shell", "iopub", "stdin", "control"):
        assert issubclass(getattr(client, f"{name}_channel_class"), SlicedPoll), name
