"""The reference model: a stack of Linear+Tanh blocks, cut into the plan's chunks, and its single-process gradients.

Chunk k holds blocks ``k*blocks_per_stage ... (k+1)*blocks_per_stage - 1``.  Each block's weights come from its own
seeded generator, so any process builds exactly the blocks it needs and the single-process reference builds them
all.  The loss of one micro-batch is the mean squared error against a random target; the batch loss is the mean
over micro-batches (equal sizes), which is why the pipeline scales each micro-batch's loss by 1/M.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .options import ModelConfig   # the configuration lives with the other options (torch-free)


class Chunk(nn.Module):
    """One model chunk: ``blocks_per_stage`` blocks of Linear then Tanh.

    ``forward(x, trace)`` appends (pre-activation z, its Linear) to ``trace`` when given: the executor's split
    backward takes gradients at those z, so W needs only one matrix product per Linear."""

    def __init__(self, chunk: int, cfg: ModelConfig):
        super().__init__()
        first = chunk * cfg.blocks_per_stage
        self.linears = nn.ModuleList(_linear(cfg, first + j) for j in range(cfg.blocks_per_stage))

    def forward(self, x, trace: list | None = None):
        for lin in self.linears:
            z = lin(x)
            if trace is not None:
                trace.append((z, lin))
            x = torch.tanh(z)
        return x


def _linear(cfg: ModelConfig, index: int) -> nn.Linear:
    g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + index)
    lin = nn.Linear(cfg.width, cfg.width, dtype=cfg.torch_dtype)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(cfg.width, cfg.width, generator=g, dtype=cfg.torch_dtype) / math.sqrt(cfg.width))
        lin.bias.copy_(0.1 * torch.randn(cfg.width, generator=g, dtype=cfg.torch_dtype))
    return lin


def make_batch(cfg: ModelConfig, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The whole batch (m micro-batches stacked along dim 0) and its target."""
    g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 999_983)
    n = m * cfg.microbatch_size
    return (torch.randn(n, cfg.width, generator=g, dtype=cfg.torch_dtype),
            torch.randn(n, cfg.width, generator=g, dtype=cfg.torch_dtype))


def loss_fn(y: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(y, target)


def reference_grads(cfg: ModelConfig, chunks: int, m: int) -> list[list[torch.Tensor]]:
    """Gradients of every chunk's parameters from one process running the whole model on the whole batch."""
    model = [Chunk(k, cfg) for k in range(chunks)]
    x, target = make_batch(cfg, m)
    for c in model:
        x = c(x)
    loss_fn(x, target).backward()
    return [[p.grad for p in c.parameters()] for c in model]


def max_grad_error(got: dict[int, list[torch.Tensor]], ref: list[list[torch.Tensor]]) -> float:
    """Largest |got - ref| over every parameter of every chunk; ``got[k]`` sums the copies of chunk k."""
    missing = [k for k in range(len(ref)) if k not in got]
    if missing:
        raise ValueError(f"no gradients came back for chunks {missing}")
    err = 0.0
    for k, grads in got.items():
        for g, r in zip(grads, ref[k], strict=True):
            e = (g.to(r.dtype).cpu() - r).abs().max().item()
            if not math.isfinite(e):      # max() would keep 0.0 over a NaN and pass a broken gradient
                return math.inf
            err = max(err, e)
    return err
