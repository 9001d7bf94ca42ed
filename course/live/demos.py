"""Small launcher targets the chapters call (workers import targets by name, so they live in a module)."""

from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist


def hello(rank: int, world_size: int) -> dict:
    """Each rank adds its number into an all_reduce; returns what it saw."""
    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    return {"rank": rank, "world_size": world_size, "pid": os.getpid(), "backend": dist.get_backend(),
            "sum_of_ranks": int(t.item())}


def ping_pong(rank: int, world_size: int, rounds: int, elements: int) -> list[float]:
    """Ranks 0 and 1 bounce a float64 tensor of ``elements`` back and forth ``rounds`` times; rank 0 returns half of
    each round trip in seconds (the one-way latency of this machine's backend for a tensor that size), the
    others an empty list."""
    buf = torch.zeros(elements, dtype=torch.float64)
    halves = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        if rank == 0:
            dist.send(buf, 1)
            dist.recv(buf, 1)
        elif rank == 1:
            dist.recv(buf, 0)
            dist.send(buf, 0)
        halves.append((time.perf_counter() - t0) / 2)
    return halves if rank == 0 else []


def fail_on(rank: int, world_size: int, bad_rank: int) -> int:
    """Rank ``bad_rank`` raises; the others wait in a barrier that never completes."""
    if rank == bad_rank:
        raise ZeroDivisionError(f"rank {rank} divides by zero on purpose")
    dist.barrier()
    return rank


def short_last_rank(rank: int, world_size: int, m: int) -> int:
    """Chapter 8's hang: the last rank is configured with one micro-batch fewer than the others (a gradient
    accumulation setting that differs between ranks).  Every rank runs ``course.minipipe``'s 1F1B step (batched
    send/recv, as torch's schedules do) with its own m, then meets the others at the end-of-step barrier, which
    the last rank reaches alone while the others wait in the pipeline for a micro-batch it never runs."""
    from ..minipipe import ROWS, worker as one_f_one_b

    mine = m - 1 if rank == world_size - 1 else m
    one_f_one_b(rank, world_size, mine, "batched", [ROWS] * mine)
    dist.barrier()
    return mine
