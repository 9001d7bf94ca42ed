"""Small launcher targets the chapters call (workers import targets by name, so they live in a module)."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def hello(rank: int, world_size: int) -> dict:
    """Each rank adds its number into an all_reduce; returns what it saw."""
    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    return {"rank": rank, "world_size": world_size, "pid": os.getpid(), "backend": dist.get_backend(),
            "sum_of_ranks": int(t.item())}


def fail_on(rank: int, world_size: int, bad_rank: int) -> int:
    """Rank ``bad_rank`` raises; the others wait in a barrier that never completes."""
    if rank == bad_rank:
        raise ZeroDivisionError(f"rank {rank} divides by zero on purpose")
    dist.barrier()
    return rank
