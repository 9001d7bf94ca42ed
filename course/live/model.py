"""The reference models, cut into the plan's chunks, and their single-process gradients.

``kind="mlp"``: a stack of Linear+Tanh blocks.  ``kind="gpt"``: a tiny GPT (``GPTChunk``).  Chunk k holds blocks
``k*blocks_per_stage ... (k+1)*blocks_per_stage - 1``.  Each block's weights come from its own seeded generator, so
any process builds exactly the blocks it needs and the single-process reference builds them all.  The loss of one
micro-batch is the mean squared error against a random target (mlp) or the mean cross-entropy of its tokens (gpt);
the batch loss is the mean over micro-batches (equal sizes), which is why the pipeline scales each micro-batch's loss
by 1/M.

``activation_bytes(cfg, chunks)`` is what each chunk keeps for its backward, per micro-batch, in bytes, counted as
the live runtime measures it (saved-tensor hooks, each storage once, parameters excluded).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .options import ModelConfig  # the configuration lives with the other options (torch-free)


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
    """The whole batch (m micro-batches stacked along dim 0) and its target (gpt: token ids and next tokens)."""
    g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 999_983)
    n = m * cfg.microbatch_size
    if cfg.kind == "gpt":
        tokens = torch.randint(0, cfg.vocab, (n, cfg.seq + 1), generator=g)
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    return (torch.randn(n, cfg.width, generator=g, dtype=cfg.torch_dtype),
            torch.randn(n, cfg.width, generator=g, dtype=cfg.torch_dtype))


def loss_fn(y: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error, or for token targets (integers) the mean cross-entropy of the logits ``y``."""
    if not target.is_floating_point():
        return F.cross_entropy(y, target.reshape(-1))
    return nn.functional.mse_loss(y, target)


# ---- the tiny GPT -------------------------------------------------------------------------------------------
def _seeded(module: nn.Module, cfg: ModelConfig, index: int) -> nn.Module:
    """Weights from the module's own generator (matrices ~ N(0, 1/fan_in), norm gains near 1, biases small)."""
    g = torch.Generator().manual_seed(cfg.seed * 1_000_003 + index)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=p.dtype)
            if p.dim() == 2 and isinstance(module, nn.Embedding):
                p.copy_(noise)
            elif p.dim() == 2:
                p.copy_(noise / math.sqrt(p.shape[1]))
            else:
                p.copy_((1.0 if name == "weight" else 0.0) + 0.1 * noise)
    return module


class GPTLayer(nn.Module):
    """Pre-norm transformer layer on (tokens, hidden) activations: LayerNorm, causal multi-head attention,
    residual; LayerNorm, Linear(h, 4h), GeLU, Linear(4h, h), residual.  No dropout, no position embedding (the
    causal mask alone orders the tokens).

    What eager autograd saves, per layer and micro-batch of T = b s tokens (hidden h, f = 4h, a heads, element
    size e; ``course.memory.eager_layer_terms``), against Korthikanti et al.'s terms (16-bit, with dropout):

    =======================================  =====================  ==================================
    tensor saved here                        bytes                  Korthikanti term
    =======================================  =====================  ==================================
    ln1's input (the layer input)            e T h                  LayerNorm 1 input 2sbh
    ln1's mean and rstd                      2 e T                  not counted there
    qkv's input (ln1's output)               e T h                  QKV input 2sbh
    q and k (contiguous, for q k^T)          2 e T h                Q and K 4sbh
    softmax output                           e a s^2 b              softmax output 2as^2b
    v                                        e T h                  V 2sbh
    proj's input (heads merged)              e T h                  output projection input 2sbh
    ln2's input, mean and rstd               e T h + 2 e T          LayerNorm 2 input 2sbh
    fc1's input (ln2's output)               e T h                  MLP input 2sbh
    GeLU's input                             e T f                  GeLU input 8sbh
    fc2's input (GeLU's output)              e T f                  fc2 input 8sbh
    =======================================  =====================  ==================================

    Where they differ: no dropout here (Korthikanti's softmax dropout mask as^2b and dropout output 2as^2b,
    and the two sbh masks are absent), the norms' per-token mean and rstd are counted, and elements are e bytes
    (8 at float64).  The weights autograd saves for the input gradients are parameters, not activations.
    """

    def __init__(self, cfg: ModelConfig, index: int):
        super().__init__()
        h, d = cfg.width, cfg.torch_dtype
        self.heads, self.seq = cfg.heads, cfg.seq
        self.ln1 = _seeded(nn.LayerNorm(h, dtype=d), cfg, 6 * index)
        self.qkv = _seeded(nn.Linear(h, 3 * h, dtype=d), cfg, 6 * index + 1)
        self.proj = _seeded(nn.Linear(h, h, dtype=d), cfg, 6 * index + 2)
        self.ln2 = _seeded(nn.LayerNorm(h, dtype=d), cfg, 6 * index + 3)
        self.fc1 = _seeded(nn.Linear(h, 4 * h, dtype=d), cfg, 6 * index + 4)
        self.fc2 = _seeded(nn.Linear(4 * h, h, dtype=d), cfg, 6 * index + 5)
        # an additive mask saves nothing for the backward (masked_fill would save a mask per call)
        self.register_buffer("mask", torch.full((cfg.seq, cfg.seq), -math.inf, dtype=d).triu(1), persistent=False)

    def forward(self, x, trace: list | None = None):
        T, h = x.shape
        s, a = self.seq, self.heads
        b, dh = T // s, h // a

        def out(module, inp):   # a parameterised module's output, kept for W when tracing
            z = module(inp)
            if trace is not None:
                trace.append((z, module))
            return z

        qkv = out(self.qkv, out(self.ln1, x))
        q, k, v = (t.reshape(b, s, a, dh).transpose(1, 2).contiguous() for t in qkv.split(h, dim=1))
        p = torch.softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(dh)) + self.mask, dim=-1)
        x = x + out(self.proj, (p @ v).transpose(1, 2).reshape(T, h))
        return x + out(self.fc2, F.gelu(out(self.fc1, out(self.ln2, x))))


class GPTChunk(nn.Module):
    """Chunk k of the tiny GPT: the embedding on chunk 0, ``blocks_per_stage`` layers, the final LayerNorm and
    lm_head on the last chunk.  Activations between chunks are (tokens, hidden); chunk 0 takes token ids
    (sequences, seq), the last chunk returns logits (tokens, vocab).

    Besides its layers, chunk 0 saves the token ids (8 bytes each, for the embedding's backward) and the last
    chunk the final norm's input, mean and rstd, lm_head's input, the log-softmax of the logits (T x vocab), the
    labels (8 bytes each) and the loss's scalar total weight."""

    def __init__(self, chunk: int, chunks: int, cfg: ModelConfig):
        super().__init__()
        h, d, first = cfg.width, cfg.torch_dtype, chunk * cfg.blocks_per_stage
        base = 6 * cfg.blocks_per_stage * chunks      # generator indices after every layer's
        self.embed = _seeded(nn.Embedding(cfg.vocab, h, dtype=d), cfg, base) if chunk == 0 else None
        self.layers = nn.ModuleList(GPTLayer(cfg, first + j) for j in range(cfg.blocks_per_stage))
        self.norm = self.head = None
        if chunk == chunks - 1:
            self.norm = _seeded(nn.LayerNorm(h, dtype=d), cfg, base + 1)
            self.head = _seeded(nn.Linear(h, cfg.vocab, bias=False, dtype=d), cfg, base + 2)

    def forward(self, x, trace: list | None = None):
        def out(module, inp):
            z = module(inp)
            if trace is not None:
                trace.append((z, module))
            return z

        if self.embed is not None:
            x = out(self.embed, x.reshape(-1))
        for layer in self.layers:
            x = layer(x, trace)
        if self.head is not None:
            x = out(self.head, out(self.norm, x))
        return x


def make_chunk(chunk: int, chunks: int, cfg: ModelConfig) -> nn.Module:
    """Chunk ``chunk`` of a model cut into ``chunks``: ``forward(x, trace)`` appends (output, module) for every
    parameterised module when ``trace`` is given (the split backward's W differentiates those outputs)."""
    return GPTChunk(chunk, chunks, cfg) if cfg.kind == "gpt" else Chunk(chunk, cfg)


def activation_bytes(cfg: ModelConfig, chunks: int) -> list[int]:
    """Bytes each chunk's forward keeps for its backward, one micro-batch (what the live runtime measures).

    mlp: the chunk's input and each Tanh's output (the next Linear's input), b x width elements each; the last
    chunk also keeps the target (MSE saves it).  gpt: ``course.memory.eager_layer_terms`` per layer plus the
    extras named in ``GPTChunk``."""
    from .. import memory
    from .options import DTYPES

    e, b = DTYPES[cfg.dtype], cfg.microbatch_size
    if cfg.kind == "mlp":
        tensor = b * cfg.width * e
        return [(cfg.blocks_per_stage + 1 + (k == chunks - 1)) * tensor for k in range(chunks)]
    shape = memory.Model("live-gpt", cfg.blocks_per_stage * chunks, cfg.width, cfg.heads, cfg.heads, 4 * cfg.width,
                         cfg.vocab, block="gpt")
    layer = sum(t.size for t in memory.eager_layer_terms(shape, cfg.seq, b, e))
    tokens = b * cfg.seq
    first = 8 * tokens                                                   # int64 token ids
    last = e * (2 * tokens * cfg.width + 2 * tokens + tokens * cfg.vocab) + 8 * tokens + e
    return [cfg.blocks_per_stage * layer + (k == 0) * first + (k == chunks - 1) * last for k in range(chunks)]


def freed_by_b(cfg: ModelConfig, chunks: int) -> list[int]:
    """Of ``activation_bytes``, what a split backward's B already frees: the tensors saved after a chunk's last
    traced output, which W never needs.  mlp: the last Tanh's output (and on the last chunk the target); gpt:
    nothing on inner chunks (the last layer ends in a residual add, which saves nothing), on the last chunk the
    loss's log-softmax, labels and total weight.  B keeps the rest, upstream of the outputs W differentiates."""
    from .options import DTYPES

    e, b = DTYPES[cfg.dtype], cfg.microbatch_size
    last = chunks - 1
    if cfg.kind == "mlp":
        tensor = b * cfg.width * e
        return [(1 + (k == last)) * tensor for k in range(chunks)]
    tokens = b * cfg.seq
    return [(k == last) * (e * tokens * cfg.vocab + 8 * tokens + e) for k in range(chunks)]


def reference_grads(cfg: ModelConfig, chunks: int, m: int) -> list[list[torch.Tensor]]:
    """Gradients of every chunk's parameters from one process running the whole model on the whole batch."""
    model = [make_chunk(k, chunks, cfg) for k in range(chunks)]
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
