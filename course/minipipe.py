"""A minimal 1F1B worker (chapter 3): one rank's whole training step in one readable loop.

The course runtime (``course.live``) runs any plan with tagged asynchronous messages.  This module shows the idea
with none of that machinery: each rank holds one stage (Linear + Tanh), runs Megatron's non-interleaved 1F1B loop
and talks to its neighbours with *blocking* send/recv.  Where the blocking calls go decides whether it runs:

- ``naive``: an op sends its output when it ends and the next op receives when it starts.  In the steady state
  rank s sends an activation to s+1 while s+1 sends a gradient to s; both wait in ``send`` for a ``recv`` that
  never comes: deadlock.
- ``parity``: the same calls, but in each exchange with a neighbour even ranks send first and odd ranks receive
  first (Megatron's non-batched path), so one side of every pair is always receiving.
- ``batched``: the send and the receive of an exchange go into one ``batch_isend_irecv`` (what torch's schedules
  and NCCL need).

Micro-batches may hold different numbers of valid tokens (rows; the rest is padding).  The last stage sums the
squared error over the valid tokens of a micro-batch and divides by the token count of the *whole batch*, so the
accumulated gradients are those of the batch's token-mean loss.  Dividing each micro-batch's own mean by m
instead is right only when every micro-batch has the same number of tokens.

    grads = run(4, 8, "parity", lengths=[4, 1, 3, 2, 4, 4, 2, 3])   # each rank's gradients
    assert max_error(grads, reference(4, 8, [4, 1, 3, 2, 4, 4, 2, 3])) < 1e-12
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn

from .live.worker import RUNNING, WAITING, set_status
from .validation import check_counts, is_count

COMMS = ("naive", "parity", "batched")
WIDTH, ROWS = 8, 4           # features per token, rows (tokens) per micro-batch including padding


def stage(s: int) -> nn.Module:
    """Stage s of the model: its own seed, so every process builds the same weights."""
    torch.manual_seed(1000 + s)
    return nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh()).double()


def batch(m: int, lengths: list[int]):
    """Inputs and targets [m, ROWS, WIDTH] and the mask [m, ROWS] of valid tokens (the first lengths[i] rows)."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(m, ROWS, WIDTH, generator=g, dtype=torch.float64)
    y = torch.randn(m, ROWS, WIDTH, generator=g, dtype=torch.float64)
    mask = (torch.arange(ROWS) < torch.tensor(lengths)[:, None]).double()
    return x, y, mask


def token_loss(out, y, mask, total_tokens):
    """Squared error summed over the valid tokens, divided by the whole batch's token count."""
    return (((out - y) ** 2).sum(-1) * mask).sum() / total_tokens


def worker(rank: int, world_size: int, m: int, comm: str, lengths: list[int]) -> list[torch.Tensor]:
    """Run one 1F1B training step on this rank; return its parameter gradients."""
    model = stage(rank)
    x, y, mask = batch(m, lengths)
    total = mask.sum()
    first, last = rank == 0, rank == world_size - 1
    prev, nxt = (None if first else rank - 1), (None if last else rank + 1)
    saved = {}                                                # micro-batch -> (input, output) kept for its B

    def forward(i, inp):
        inp = x[i] if first else inp.requires_grad_()
        out = model(inp)
        saved[i] = (inp, token_loss(out, y[i], mask[i], total) if last else out)
        return None if last else out.detach()

    def backward(i, grad):
        inp, out = saved.pop(i)
        out.backward(grad)                                    # accumulates into the parameters' .grad
        return None if first else inp.grad

    def exchange(send, to, frm):
        """Send ``send`` to rank ``to`` and receive from rank ``frm`` (either side may be None)."""
        got = torch.empty(ROWS, WIDTH, dtype=torch.float64) if frm is not None else None
        if comm == "batched":
            ops = ([dist.P2POp(dist.isend, send, to)] if to is not None else []) + \
                  ([dist.P2POp(dist.irecv, got, frm)] if frm is not None else [])
            for req in dist.batch_isend_irecv(ops) if ops else []:
                req.wait()
            return got
        steps = [("send", to), ("recv", frm)]
        if comm == "parity" and rank % 2:                     # odd ranks receive first
            steps.reverse()
        for what, peer in steps:
            if peer is None:
                continue
            set_status(WAITING, f"blocked in {what} {'to' if what == 'send' else 'from'} rank {peer}")
            dist.send(send, peer) if what == "send" else dist.recv(got, peer)
            set_status(RUNNING)
        return got

    def send(t, to):
        exchange(t, to, None)

    def recv(frm):
        return exchange(None, None, frm)

    warmup = min(world_size - rank - 1, m)                    # 1F1B: p - s - 1 forwards before the first B
    for i in range(warmup):
        send(forward(i, recv(prev)), nxt)
    inp = recv(prev) if warmup < m else None
    for k in range(m - warmup):                               # steady state: one forward, one backward
        grad = exchange(forward(warmup + k, inp), nxt, nxt)   # send the activation, receive a gradient
        more = warmup + k + 1 < m
        inp = exchange(backward(k, grad), prev, prev if more else None)   # send the gradient, receive the next input
    for i in range(m - warmup, m):                            # cool-down: the remaining backwards
        send(backward(i, recv(nxt)), prev)
    return [q.grad for q in model.parameters()]


def run(p: int, m: int, comm: str = "parity", lengths: list[int] | None = None, *, stall: float = 2.0,
        timeout: float = 60.0) -> list[list[torch.Tensor]]:
    """Run :func:`worker` on p gloo processes (``course.live.launch``); every stage's gradients, by rank.

    ``lengths``: valid tokens per micro-batch (default: all ROWS).  A deadlock raises
    ``course.live.DeadlockDetected`` once every rank has been blocked for ``stall`` seconds."""
    from .live import launch

    lengths = [ROWS] * m if lengths is None else list(lengths)
    check_args(p, m, comm, lengths)
    return launch(worker, p, args=(m, comm, lengths), stall=stall, timeout=timeout, echo=False)


def reference(p: int, m: int, lengths: list[int]) -> list[list[torch.Tensor]]:
    """Gradients of every stage from one process: the whole model on the whole batch, token-mean loss."""
    stages = [stage(s) for s in range(p)]
    x, y, mask = batch(m, lengths)
    out = x
    for s in stages:
        out = s(out)
    token_loss(out, y, mask, mask.sum()).backward()
    return [[q.grad for q in s.parameters()] for s in stages]


def max_error(got: list[list[torch.Tensor]], want: list[list[torch.Tensor]]) -> float:
    return max((a - b).abs().max().item() for gs, ws in zip(got, want) for a, b in zip(gs, ws))


def check_args(p: int, m: int, comm: str, lengths: list[int]) -> None:
    """One clear line for bad input."""
    check_counts(p=p, m=m)
    if comm not in COMMS:
        raise ValueError(f"comm must be one of {', '.join(COMMS)}, got {comm!r}")
    if len(lengths) != m or not all(is_count(n) and n <= ROWS for n in lengths):
        raise ValueError(f"lengths must list m={m} token counts between 1 and {ROWS}, got {lengths!r}")
