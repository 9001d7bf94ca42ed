"""Memory in bytes: what one pipeline rank holds for a transformer, and how it moves over a schedule.

Standard library only (the curves over time come from the simulator):

1. **Activations of one layer for one micro-batch** (``layer_activation_bytes``), term by term
   (``layer_terms``), after Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
   Models" (arXiv:2205.05198), sections 4 and 5.  Notation: s sequence length, b micro-batch size, h hidden size,
   a attention heads, t tensor-parallel size, f FFN size, v vocabulary.  The paper's assumptions: activations
   in 16-bit (2 bytes per element), dropout masks 1 byte per element, f = 4h, no flash attention (the
   attention scores are materialised).  Its results, bytes per layer per micro-batch:

   =====================================  ==============================
   no parallelism                         sbh (34 + 5as/h)
   tensor parallel (TP)                   sbh (10 + 24/t + 5as/(ht))
   TP + sequence parallel (SP)            sbh/t (34 + 5as/h)
   selective recompute + TP + SP          34 sbh/t
   selective recompute, TP without SP     sbh (10 + 24/t)
   full recompute                         2 sbh (the layer input only; 2sbh/t with SP)
   =====================================  ==============================

   ``korthikanti_layer_bytes`` is that table.  34sbh is 11sbh of attention (LayerNorm output 2, Q and K 4,
   V 2, output-projection input 2, dropout mask 1) + 19sbh of MLP (input 2, GeLU input 8, GeLU output 8,
   dropout mask 1) + 4sbh for the two LayerNorm inputs; 5as²b is the softmax output (2), its dropout mask (1)
   and the dropout output (2).  Under TP the 10sbh of LayerNorm inputs, the inputs of the two column-parallel
   matmuls and the two dropout masks are replicated on every TP rank; SP shards them too.  Selective
   recompute recomputes the attention core (QKᵀ, softmax, dropout, attention over V), dropping 5as²b.

   ``block="gpt"`` reproduces the paper term by term and generalises the MLP to any f (3sbh + 4sbf).
   ``block="llama"``, the real block of the Llama 3 presets (RMSNorm, RoPE, grouped-query attention with
   g = kv_heads x h/a key/value width, SwiGLU MLP, no dropout, no biases), as eager autograd saves it:

   - attention: RMSNorm input 2sbh, QKV input 2sbh (replicated under TP); Q after RoPE 2sbh, K and V 2sbg
     each, softmax output 2as²b (needed by the softmax backward and by the product with V; no dropout, so no
     mask and no dropout output), output-projection input 2sbh (sharded);
   - MLP: RMSNorm input 2sbh, gate/up input 2sbh (replicated); gate output (the SiLU input), SiLU output,
     up output, down-projection input 2sbf each (sharded);
   - total sbh(12 + 4g/h + 8f/h) + 2as²b; selective recompute drops 2as²b (what flash attention does too,
     keeping only a per-row fp32 log-sum-exp of 4asb, which is left out here), full recompute keeps 2sbh.

   ``flash=True`` (FlashAttention, Dao et al. 2022): the attention core never materialises the s x s scores.
   Its backward recomputes them from Q, K, V, the output and a per-row fp32 log-sum-exp, so the core's s²
   terms (softmax output, and for gpt its dropout mask and dropout output: the fused kernel regenerates the mask
   from its random state) give way to 4asb bytes of log-sum-exp.  Everything else is kept as without it, and
   recomputation works as before: selective recomputation drops the core (now the log-sum-exp), full keeps the
   layer input.  Korthikanti's table (``korthikanti_layer_bytes``) is the paper's, without flash attention.

   ``dtype_bytes`` (2 for bf16/fp16, 4 for fp32) replaces the 2 of every activation; masks stay 1 byte.
   ``eager_layer_terms``: the gpt block without dropout as eager PyTorch saves it, the live runtime's tiny GPT
   (course.live.model), whose saved bytes the runtime measures.

2. **First and last stage extras** (per micro-batch, held like a layer's activations from F to B):
   the embedding's dropout mask sbh on the first stage (paper, "input and output layer"; /t with SP; none
   for llama, which has no dropout); on the last stage the final norm's input 2sbh and the lm_head input
   2sbh (/t with SP) and the logits in fp32 for the loss, 4sbv/t (vocabulary-parallel), the paper's
   4sbh/t (1 + v/h).  Token ids, labels and the loss scalar are left out.

3. **Weights, gradients and optimizer states per rank**: mixed-precision Adam as in the ZeRO paper, 16 bytes
   per parameter (16-bit weights 2, 16-bit gradients 2, fp32 master weights, momentum and variance 12);
   ZeRO-1 divides the 12 by the data-parallel size.  Linear weights (and their column-parallel biases) are
   split over TP ranks, norms and row-parallel biases are replicated; the embedding (and the position
   embedding of GPT-3) sits on the stage that computes chunk 0, lm_head and the final norm on the stage of
   the last chunk (with tied embeddings the last stage holds a copy, as Megatron does).  A rank holding
   several stages (interleaved, V shapes, DualPipe's two copies) holds each stage's parameters.

Not modelled: the transient working set of a recomputed layer during its backward, the activation gradients
in flight, communication buffers, the CUDA context and allocator fragmentation.

Over time: ``pipeline_memory`` runs the simulator with ``Costs(act=...)`` set to each chunk's activation bytes
(one value per model chunk, so interleaved and V placements get the right sizes per stage) and adds each rank's
static bytes.  A split backward's B frees ``1 - w_mem`` of a micro-batch's activations and W the rest
(``Costs.w_mem``, default 1.0: everything is held until W, which keeps the course's counts in micro-batches
unchanged).  ``w_mem_share`` computes the value the Zero Bubble paper's M_W / M_B suggests for a block: what W
still needs, the inputs of the linear layers and the gradients of their outputs, over the layer's activations.
When the chunks' shares differ, ``two_part_memory`` sums two memory curves of one timeline (a part freed by B,
a part held until W).

Traffic in bytes (``step_traffic``): what one GPU sends in one training step for each kind of parallelism.
TP (Megatron's layout): per layer and micro-batch two all-reduces of the s·b·h activation in the forward (after
attention, after the MLP) and two in the backward (at the two column-parallel inputs); with SP each becomes an
all-gather plus a reduce-scatter, the same bytes; full recompute runs the forward's two again in the backward.
A ring all-reduce makes each of n ranks send 2(n-1)/n of the tensor.  PP: one s·b·h activation or gradient per
micro-batch and stage boundary, 1/t of it per GPU (SP shards it; without SP Megatron's scatter/gather does the
same).  DP: one all-reduce of the rank's 16-bit gradients per step (ZeRO-1's reduce-scatter plus all-gather sends
the same bytes).

Which layouts fit: ``fit_layouts`` tries every (tp, pp, dp, schedule, v, m, recompute) for a number of GPUs and
a global batch, simulates each with compute times from FLOPs, and keeps those whose busiest rank fits.  Given
bandwidths, it adds communication to the step time: TP traffic at ``tp_bw`` (inside a node) lengthens every F
and B, each PP transfer takes its bytes at ``dp_bw`` (between nodes) as the simulator's latency, and the DP
all-reduce at ``dp_bw`` runs after the flush (not overlapped with the backward: Megatron can hide part of it,
so this is its most pessimistic cost).  Without bandwidths communication costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

from .plan import ops_of
from .validation import check_counts, check_positive_number

RECOMPUTE = ("none", "selective", "full")
BLOCKS = ("gpt", "llama")
WEIGHT_BYTES, GRAD_BYTES, OPTIMIZER_BYTES = 2, 2, 12      # mixed-precision Adam: 16 bytes per parameter
GB = 10 ** 9
MAX_BYTES = 2 ** 63          # byte counts stay 64-bit integers (check_bytes)


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer's shape.  ``kv_heads`` < ``heads`` is grouped-query attention."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    block: str = "llama"          # "gpt": LayerNorm, GeLU MLP, biases, dropout; "llama": RMSNorm, SwiGLU, GQA
    tied: bool = False            # lm_head shares the embedding's weight
    positions: int = 0            # learned position embeddings (GPT-3: 2048); 0 for RoPE

    def __post_init__(self):
        check_counts(**{f"model {name}": getattr(self, name)
                        for name in ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")})
        if self.block not in BLOCKS:
            raise ValueError(f"unknown block {self.block!r}; allowed: {', '.join(BLOCKS)}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} must be a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} must be a multiple of kv_heads {self.kv_heads}")
        if self.block == "gpt" and self.kv_heads != self.heads:
            raise ValueError("the gpt block has multi-head attention: kv_heads must equal heads")

    @property
    def kv_width(self) -> int:
        """g: the width of K (and of V), kv_heads x head size."""
        return self.kv_heads * (self.hidden // self.heads)

    def layer_params(self) -> tuple[int, int]:
        """(split over TP ranks, replicated on every TP rank) parameters of one layer."""
        h, f, g = self.hidden, self.ffn, self.kv_width
        if self.block == "gpt":   # QKV (3h^2 + 3h), out proj (h^2 + h), fc1 (hf + f), fc2 (fh + h), 2 LayerNorms
            return 4 * h * h + 2 * h * f + 3 * h + f, h + h + 4 * h
        return 2 * h * h + 2 * h * g + 3 * h * f, 2 * h      # q, o; k, v; gate, up, down; 2 RMSNorms

    def embedding_params(self) -> tuple[int, int]:
        """(split, replicated) parameters on the first stage: vocabulary-parallel embedding, position embedding."""
        return self.vocab * self.hidden, self.positions * self.hidden

    def head_params(self) -> tuple[int, int]:
        """(split, replicated) parameters on the last stage: lm_head (a copy when tied) and the final norm."""
        return self.vocab * self.hidden, (2 if self.block == "gpt" else 1) * self.hidden

    def params(self) -> int:
        """The model's parameter count (a tied lm_head counted once)."""
        emb, head = sum(self.embedding_params()), sum(self.head_params())
        return self.layers * sum(self.layer_params()) + emb + head - (self.vocab * self.hidden if self.tied else 0)


# Published shapes.  GPT-3: Brown et al. 2020, table 2.1 (vocabulary: the GPT-2 BPE, 50257; tied embeddings,
# learned positions).  Llama 3: Dubey et al. 2024, table 3 (vocabulary 128256 incl. special tokens, untied).
PRESETS: dict[str, Model] = {
    "gpt3-175b": Model("gpt3-175b", 96, 12288, 96, 96, 4 * 12288, 50257, block="gpt", tied=True, positions=2048),
    "llama3-8b": Model("llama3-8b", 32, 4096, 32, 8, 14336, 128256),
    "llama3-70b": Model("llama3-70b", 80, 8192, 64, 8, 28672, 128256),
    "llama3-405b": Model("llama3-405b", 126, 16384, 128, 8, 53248, 128256),
}


def preset(name: str) -> Model:
    if name not in PRESETS:
        raise ValueError(f"unknown model {name!r}; presets: {', '.join(PRESETS)}")
    return PRESETS[name]


@dataclass(frozen=True)
class ActivationConfig:
    """How activations are kept: sequence length, micro-batch size, TP size, SP, recomputation, element size."""

    seq: int
    mbs: int = 1
    tp: int = 1
    sp: bool = False
    recompute: str = "none"       # "none", "selective" (attention core) or "full" (keep the layer input only)
    dtype_bytes: int = 2          # 2 for bf16/fp16 activations, 4 for fp32
    flash: bool = False           # FlashAttention: no s x s scores kept, a per-row log-sum-exp instead

    def __post_init__(self):
        check_counts(**{name: getattr(self, name) for name in ("seq", "mbs", "tp", "dtype_bytes")})
        if self.recompute not in RECOMPUTE:
            raise ValueError(f"unknown recompute {self.recompute!r}; allowed: {', '.join(RECOMPUTE)}")
        if self.sp and self.tp == 1:
            raise ValueError("sequence parallelism needs a tensor-parallel size tp > 1")
        if type(self.flash) is not bool:
            raise ValueError(f"flash must be True or False, got {self.flash!r}")

    def check(self, model: Model) -> None:
        if model.heads % self.tp or model.kv_heads % self.tp:
            raise ValueError(f"tp={self.tp} must divide heads ({model.heads}) and kv_heads ({model.kv_heads}) "
                             f"of {model.name}")
        if self.sp and self.seq % self.tp:
            raise ValueError(f"sequence parallelism needs seq ({self.seq}) divisible by tp ({self.tp})")


@dataclass(frozen=True)
class Term:
    """One tensor a layer keeps for its backward: bytes for one micro-batch without any parallelism."""

    what: str
    size: int
    sharded: bool        # split over TP ranks even without SP (inside the tensor-parallel region)
    core: bool = False   # part of the attention core, recomputed by selective recomputation
    linear_input: bool = False   # an input of a linear layer: the weight gradient (W) needs it


def layer_terms(model: Model, seq: int, mbs: int = 1, dtype_bytes: int = 2, flash: bool = False) -> list[Term]:
    """The tensors one layer keeps for the backward (see the module docstring for their sources)."""
    terms = _materialised_terms(model, seq, mbs, dtype_bytes)
    if flash:   # the attention core keeps a per-row fp32 log-sum-exp instead of its s x s tensors
        lse = Term("softmax log-sum-exp (fp32, flash attention)", 4 * model.heads * seq * mbs, True, core=True)
        first = next(i for i, t in enumerate(terms) if t.core)
        terms = [t for t in terms[:first] if not t.core] + [lse] + [t for t in terms[first:] if not t.core]
    return terms


def _materialised_terms(model: Model, seq: int, mbs: int, dtype_bytes: int) -> list[Term]:
    s, b, h, a, f, g, d = seq, mbs, model.hidden, model.heads, model.ffn, model.kv_width, dtype_bytes
    sbh, scores = s * b * h, a * s * s * b
    if model.block == "gpt":
        return [
            Term("LayerNorm 1 input", d * sbh, False),
            Term("QKV input (LayerNorm 1 output)", d * sbh, False, linear_input=True),
            Term("Q and K", 2 * d * sbh, True),
            Term("softmax output", d * scores, True, core=True),
            Term("softmax dropout mask", scores, True, core=True),
            Term("attention probabilities after dropout", d * scores, True, core=True),
            Term("V", d * sbh, True),
            Term("output projection input", d * sbh, True, linear_input=True),
            Term("attention dropout mask", sbh, False),
            Term("LayerNorm 2 input", d * sbh, False),
            Term("fc1 input (LayerNorm 2 output)", d * sbh, False, linear_input=True),
            Term("GeLU input", d * s * b * f, True),
            Term("fc2 input (GeLU output)", d * s * b * f, True, linear_input=True),
            Term("MLP dropout mask", sbh, False),
        ]
    return [
        Term("RMSNorm 1 input", d * sbh, False),
        Term("QKV input (RMSNorm 1 output)", d * sbh, False, linear_input=True),
        Term("Q after RoPE", d * sbh, True),
        Term("K after RoPE", d * s * b * g, True),
        Term("V", d * s * b * g, True),
        Term("softmax output", d * scores, True, core=True),
        Term("output projection input", d * sbh, True, linear_input=True),
        Term("RMSNorm 2 input", d * sbh, False),
        Term("gate/up input (RMSNorm 2 output)", d * sbh, False, linear_input=True),
        Term("gate output (SiLU input)", d * s * b * f, True),
        Term("SiLU output", d * s * b * f, True),
        Term("up output", d * s * b * f, True),
        Term("down projection input", d * s * b * f, True, linear_input=True),
    ]


def eager_layer_terms(model: Model, seq: int, mbs: int = 1, dtype_bytes: int = 8) -> list[Term]:
    """The gpt block without dropout as eager PyTorch autograd saves it (the live runtime's tiny GPT,
    ``course.live.model.GPTLayer``): Korthikanti's terms without the dropout masks and the dropout output, plus
    each LayerNorm's per-token mean and rstd, all in ``dtype_bytes`` elements."""
    if model.block != "gpt":
        raise ValueError("eager_layer_terms describes the gpt block")
    stats = 2 * seq * mbs * dtype_bytes
    return [t for t in layer_terms(model, seq, mbs, dtype_bytes) if "dropout" not in t.what] + [
        Term("LayerNorm 1 mean and rstd", stats, False), Term("LayerNorm 2 mean and rstd", stats, False)]


def _shard(size: int, split: bool, t: int) -> Fraction:
    return Fraction(size, t) if split else Fraction(size)


def layer_activation_bytes(model: Model, cfg: ActivationConfig) -> int:
    """Bytes one layer keeps for one micro-batch on one TP rank (rounded to the nearest byte)."""
    cfg.check(model)
    t = cfg.tp
    if cfg.recompute == "full":               # only the layer's input: 2sbh (sharded by SP)
        return check_bytes(round(_shard(cfg.dtype_bytes * cfg.seq * cfg.mbs * model.hidden, cfg.sp, t)),
                           "activations of one layer for one micro-batch")
    total = sum(_shard(term.size, term.sharded or cfg.sp, t)
                for term in layer_terms(model, cfg.seq, cfg.mbs, cfg.dtype_bytes, cfg.flash)
                if not (term.core and cfg.recompute == "selective"))
    return check_bytes(round(total), "activations of one layer for one micro-batch")


def korthikanti_layer_bytes(s: int, b: int, h: int, a: int, t: int = 1, sp: bool = False,
                            recompute: str = "none") -> int:
    """The paper's closed forms (16-bit activations, 1-byte masks, f = 4h), bytes per layer per micro-batch."""
    if recompute not in RECOMPUTE:
        raise ValueError(f"unknown recompute {recompute!r}; allowed: {', '.join(RECOMPUTE)}")
    sbh, r = Fraction(s * b * h), Fraction(a * s, h)
    if recompute == "full":
        total = 2 * sbh / (t if sp else 1)
    elif recompute == "selective":
        total = 34 * sbh / t if sp else sbh * (10 + Fraction(24, t))
    elif sp:
        total = sbh / t * (34 + 5 * r)
    else:
        total = sbh * (10 + Fraction(24, t) + 5 * r / t)
    return round(total)


def embedding_activation_bytes(model: Model, cfg: ActivationConfig) -> int:
    """First-stage extra per micro-batch: the embedding's dropout mask (gpt), sbh bytes (/t with SP)."""
    if model.block != "gpt":
        return 0
    return round(_shard(cfg.seq * cfg.mbs * model.hidden, cfg.sp, cfg.tp))


def output_activation_bytes(model: Model, cfg: ActivationConfig) -> int:
    """Last-stage extra per micro-batch: final norm input and lm_head input (2sbh each, /t with SP) and the
    fp32 logits 4sbv/t."""
    sbh = cfg.seq * cfg.mbs * model.hidden
    inputs = _shard(2 * cfg.dtype_bytes * sbh, cfg.sp, cfg.tp)
    return round(inputs + Fraction(4 * cfg.seq * cfg.mbs * model.vocab, cfg.tp))


def w_mem_share(model: Model, cfg: ActivationConfig) -> float:
    """The share of a layer's activations a split backward still holds between B and W (for ``Costs.w_mem``).

    W computes dW = Xᵀ·dY for each linear layer: it needs the linear inputs X (kept since F) and the output
    gradients dY (made by B).  Everything else is freed by B.  Returns (inputs + output gradients) / (what F
    keeps), capped at 1.  For the gpt block without parallelism this is M_W = 32sbh against
    M_B = 34sbh + 5as²b, the values the Zero Bubble paper (Qi et al., ICLR 2024) gives.  The output gradients
    of the linear layers: gpt 3h + h + f + h per token (QKV, out, fc1, fc2), llama h + 2g + h + 2f + h (q, k and
    v, out, gate and up, down); with full recompute the layer's activations are rebuilt in the
    backward, so W holds the same tensors but F kept only the input: the share is then reported as 1."""
    if cfg.recompute == "full":
        return 1.0
    t, d, tokens = cfg.tp, cfg.dtype_bytes, cfg.seq * cfg.mbs
    h, f, g = model.hidden, model.ffn, model.kv_width
    terms = layer_terms(model, cfg.seq, cfg.mbs, d, cfg.flash)
    inputs = sum(_shard(x.size, x.sharded or cfg.sp, t) for x in terms if x.linear_input)
    grads_width = (3 * h + h + f + h) if model.block == "gpt" else (h + 2 * g + h + 2 * f + h)
    # Column-parallel outputs (QKV, fc1 / gate, up) are sharded; row-parallel outputs (out proj, fc2 / down)
    # are full width per TP rank unless SP scatters them.
    row_out = 2 * h
    grads = Fraction(d * tokens * (grads_width - row_out), t) + _shard(d * tokens * row_out, cfg.sp, t)
    return float(min(Fraction(1), (inputs + grads) / layer_activation_bytes(model, cfg)))


# ---- placing layers on chunks and ranks --------------------------------------------------------------------
def layers_per_chunk(layers: int, chunks: int) -> list[int]:
    """Layers of each model chunk: as even as possible, the earlier chunks taking one more."""
    if chunks > layers:
        raise ValueError(f"cannot cut {layers} layers into {chunks} chunks: each chunk needs at least one layer")
    q, r = divmod(layers, chunks)
    return [q + (k < r) for k in range(chunks)]


def chunk_activation_bytes(model: Model, cfg: ActivationConfig, chunks: int, extras: bool = True) -> list[int]:
    """Per model chunk, the activation bytes one micro-batch keeps (chunk 0 and the last with their extras)."""
    per_layer = layer_activation_bytes(model, cfg)
    out = [n * per_layer for n in layers_per_chunk(model.layers, chunks)]
    if extras:
        out[0] += embedding_activation_bytes(model, cfg)
        out[-1] += output_activation_bytes(model, cfg)
    return out


def chunk_params(model: Model, chunks: int, tp: int = 1) -> list[int]:
    """Parameters each model chunk holds on one TP rank (embedding on chunk 0, lm_head and final norm last)."""
    split, rep = model.layer_params()
    out = []
    for k, n in enumerate(layers_per_chunk(model.layers, chunks)):
        total = n * (Fraction(split, tp) + rep)
        if k == 0:
            e_split, e_rep = model.embedding_params()
            total += Fraction(e_split, tp) + e_rep
        if k == chunks - 1:
            h_split, h_rep = model.head_params()
            total += Fraction(h_split, tp) + h_rep
        out.append(round(total))
    return out


@dataclass
class RankMemory:
    """What one pipeline rank (one TP rank of it) holds, in bytes; ``activations`` is the peak over the step."""

    rank: int
    params: int
    weights: int
    grads: int
    optimizer: int
    activations: int

    @property
    def static(self) -> int:
        return self.weights + self.grads + self.optimizer

    @property
    def total(self) -> int:
        """Peak bytes: static state plus the activation peak."""
        return self.static + self.activations

    def to_json(self) -> dict:
        return {"rank": self.rank, "params": self.params, "weights": self.weights, "grads": self.grads,
                "optimizer": self.optimizer, "activations": self.activations, "total": self.total}


def rank_params(plan, model: Model, tp: int = 1) -> list[int]:
    """Parameters each pipeline rank of ``plan`` holds: the sum over its stages' chunks.  A tied embedding whose
    first and last chunks sit on the same rank (p = 1, V shapes) is held once."""
    chunk_of = plan.chunk_of_stage()
    L = plan.chunks
    per_chunk = chunk_params(model, L, tp)
    out = []
    for stages in plan.placement:
        held = [chunk_of[s] for s in stages if s in chunk_of]
        n = sum(per_chunk[k] for k in held)
        if model.tied and 0 in held and L - 1 in held:
            n -= round(Fraction(model.vocab * model.hidden, tp))
        out.append(n)
    return out


def static_bytes(params: int, dp: int = 1, zero: int = 0) -> tuple[int, int, int]:
    """(weights, gradients, optimizer states) bytes for ``params`` parameters; ZeRO-1 shards the optimizer."""
    if zero not in (0, 1):
        raise ValueError(f"zero must be 0 (no sharding) or 1 (optimizer states over dp ranks), got {zero!r}")
    check_counts(dp=dp)
    check_bytes((WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES) * params,
                "weights, gradients and optimizer states of the model")
    opt = OPTIMIZER_BYTES * params
    return WEIGHT_BYTES * params, GRAD_BYTES * params, -(-opt // dp) if zero == 1 else opt


def check_bytes(n: int, what: str) -> int:
    """``n`` (bytes of ``what``) if it stays below 2**63 bytes (9.2 EB), far beyond any machine: larger counts
    would overflow the 64-bit integers of traces and of most tools reading the JSON; refused with one line."""
    if n >= MAX_BYTES:
        raise ValueError(f"{what} would take about 2**{n.bit_length() - 1} bytes, beyond the 2**63-byte limit "
                         "of byte counts (a sequence, batch or model far too large)")
    return n


@dataclass
class PipelineMemory:
    """Per-rank memory of one schedule in bytes: static state, activation peaks and curves over time."""

    model: Model
    cfg: ActivationConfig
    timeline: object                       # the simulated Timeline (its memory levels are activation bytes)
    ranks: list[RankMemory]
    activation_bytes_per_layer: int
    chunk_bytes: list[int]
    dp: int = 1
    zero: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def peak(self) -> list[int]:
        return [r.total for r in self.ranks]

    def curves(self) -> list[list[tuple[float, int]]]:
        """Per rank [(time, bytes held), ...]: static state plus live activations, a step function."""
        return [[(t, st.static + round(level)) for t, level in pts]
                for st, pts in zip(self.ranks, self.timeline.memory)]

    def to_json(self) -> dict:
        return {"model": self.model.name, "seq": self.cfg.seq, "mbs": self.cfg.mbs, "tp": self.cfg.tp,
                "sp": self.cfg.sp, "recompute": self.cfg.recompute, "flash_attention": self.cfg.flash,
                "dp": self.dp, "zero": self.zero,
                "schedule": self.timeline.name, "p": self.timeline.p, "m": self.meta.get("m"),
                "activation_bytes_per_layer": self.activation_bytes_per_layer,
                "chunk_activation_bytes": self.chunk_bytes,
                "ranks": [r.to_json() for r in self.ranks]}


def pipeline_memory(plan, model: Model, cfg: ActivationConfig, costs=None, dp: int = 1, zero: int = 0,
                    extras: bool = True, timeline=None) -> PipelineMemory:
    """Simulate ``plan`` with each chunk's activation bytes as ``Costs.act``; return every rank's memory.

    ``costs`` gives durations (and ``w_mem``); its ``act`` is replaced.  Pass a ready ``timeline`` simulated
    with ``act=chunk_activation_bytes(...)`` to skip the simulation."""
    from .costs import Costs

    cfg.check(model)
    chunk_bytes = chunk_activation_bytes(model, cfg, plan.chunks, extras)
    if timeline is None:
        from .sim import simulate
        costs = replace(costs or Costs(), act=chunk_bytes)
        timeline = simulate(plan, costs)
    params = rank_params(plan, model, cfg.tp)
    ranks = []
    for r, (n, peak) in enumerate(zip(params, timeline.peak_activations)):
        weights, grads, opt = static_bytes(n, dp, zero)
        ranks.append(RankMemory(r, n, weights, grads, opt, round(peak)))
    return PipelineMemory(model, cfg, timeline, ranks, layer_activation_bytes(model, cfg), chunk_bytes, dp, zero,
                          {"m": plan.m})


def two_part_memory(timeline, plan, held_until_w: list[float], freed_by_b: list[float]) -> list[list[tuple]]:
    """Per rank [(time, bytes)] over ``timeline`` when each chunk's activations come in two parts: ``freed_by_b``
    (per chunk) is released by its B, ``held_until_w`` by its W (in a plan without W ops both by the backward).

    A split backward frees what W does not need (the input gradient's intermediates); a single ``Costs.w_mem``
    says the same when every chunk frees the same share.  When the shares differ (the first and last chunks
    with their extras), this sums two of the timeline's own memory curves: the held part with ``w_mem = 1`` and
    the freed part with ``w_mem = 0``."""
    chunk_of = plan.chunk_of_stage()

    def curves(per_chunk, w_mem):
        act = {s: float(per_chunk[k]) for s, k in chunk_of.items()}
        return timeline.replace(act=act, w_mem=w_mem).memory

    out = []
    for a, b in zip(curves(held_until_w, 1.0), curves(freed_by_b, 0.0)):
        merged, i, j, level_a, level_b = [], 0, 0, 0.0, 0.0
        for t in sorted({t for t, _ in a} | {t for t, _ in b}):
            while i < len(a) and a[i][0] <= t:
                level_a = a[i][1]
                i += 1
            while j < len(b) and b[j][0] <= t:
                level_b = b[j][1]
                j += 1
            merged.append((t, level_a + level_b))
        out.append(merged)
    return out


# ---- compute time, for step-time estimates ----------------------------------------------------------------
def layer_flops(model: Model, cfg: ActivationConfig) -> tuple[float, float]:
    """(matmul FLOPs with weights, attention-core FLOPs) of one layer's forward for one micro-batch, one TP rank.

    Linear layers: 2 FLOPs per weight per token; attention core: QKᵀ and probabilities x V, 4s²h per sequence
    (causal masking not exploited).  Backward: input gradient = forward, weight gradient = linear part."""
    split, _ = model.layer_params()
    tokens = cfg.seq * cfg.mbs
    return 2.0 * split * tokens / cfg.tp, 4.0 * cfg.seq * cfg.seq * model.hidden * cfg.mbs / cfg.tp


def chunk_times(model: Model, cfg: ActivationConfig, chunks: int, flops_per_s: float,
                tp_bw: float | None = None) -> tuple[list[float], list[float], list[float]]:
    """Seconds of F, B (input gradient) and W (weight gradient) per chunk for one micro-batch.

    B of the attention core costs twice its forward (gradients of the scores, of Q, K and V) and has no W.
    Selective recompute adds the attention core's forward to B, full recompute the whole forward; flash attention
    recomputes the core's forward in its backward too (once, with or without selective recompute).  The last
    chunk adds lm_head (2svh FLOPs per sequence, on the TP rank's vocabulary share).  With ``tp_bw`` (bytes/s
    each GPU sends inside a node) F and B also wait for their TP traffic (``tp_layer_bytes``); W has none."""
    check_positive_number("flops_per_s", flops_per_s)
    if tp_bw is not None:
        check_positive_number("tp_bw", tp_bw, "bytes/s")
    lin, core = layer_flops(model, cfg)
    f_layer = lin + core
    recomputed = f_layer if cfg.recompute == "full" else core if cfg.recompute == "selective" or cfg.flash else 0
    b_layer = lin + 2 * core + recomputed
    head = 2.0 * cfg.seq * cfg.mbs * model.vocab * model.hidden / cfg.tp
    f_comm, b_comm = (x / tp_bw for x in tp_layer_bytes(model, cfg)) if tp_bw else (0.0, 0.0)
    f, b, w = [], [], []
    counts = layers_per_chunk(model.layers, chunks)
    for k, n in enumerate(counts):
        extra = head if k == chunks - 1 else 0.0
        f.append((n * f_layer + extra) / flops_per_s + n * f_comm)
        b.append((n * b_layer + extra) / flops_per_s + n * b_comm)
        w.append((n * lin + extra) / flops_per_s)
    return f, b, w


# ---- communication in bytes --------------------------------------------------------------------------------
def ring_share(n: int) -> float:
    """Bytes each of n ranks sends per byte of a ring all-reduce: 2(n-1)/n (a reduce-scatter, then an all-gather)."""
    check_counts(n=n)
    return 2 * (n - 1) / n


def tp_layer_bytes(model: Model, cfg: ActivationConfig) -> tuple[float, float]:
    """(forward, backward) bytes one TP rank sends for one layer and one micro-batch (module docstring)."""
    one = ring_share(cfg.tp) * cfg.dtype_bytes * cfg.seq * cfg.mbs * model.hidden
    return 2 * one, (4 if cfg.recompute == "full" else 2) * one


def pp_transfer_bytes(model: Model, cfg: ActivationConfig) -> float:
    """Bytes one GPU sends for one activation (or its gradient) at a stage boundary: s·b·h elements over t."""
    return cfg.dtype_bytes * cfg.seq * cfg.mbs * model.hidden / cfg.tp


def dp_bytes(params: int, dp: int) -> float:
    """Bytes one GPU sends per step to synchronise the 16-bit gradients of its ``params`` over ``dp`` replicas."""
    return ring_share(dp) * GRAD_BYTES * params


def step_traffic(plan, model: Model, cfg: ActivationConfig, dp: int = 1) -> list[dict]:
    """Per pipeline rank of ``plan``, the bytes one of its GPUs sends in one step: {"tp", "pp", "dp"}.

    TP: ``tp_layer_bytes`` for every layer of every F and B the rank runs; PP: one ``pp_transfer_bytes`` for
    every op whose output another rank needs (an F's activation, a B's gradient); DP: ``dp_bytes`` of the rank's
    parameters."""
    cfg.check(model)
    rank_of, chunk_of = plan.rank_of_stage(), plan.chunk_of_stage()
    layers = layers_per_chunk(model.layers, plan.chunks)
    fwd, bwd = tp_layer_bytes(model, cfg)
    sent = [0] * plan.p
    for r, steps in enumerate(plan.ranks):
        for op in (op for st in steps for op in ops_of(st)):
            for dep in plan.dependencies(op):
                if rank_of[dep.stage] != r:
                    sent[rank_of[dep.stage]] += 1
    out = []
    for r, (steps, params) in enumerate(zip(plan.ranks, rank_params(plan, model, cfg.tp))):
        ops = [op for st in steps for op in ops_of(st)]
        tp = sum(layers[chunk_of[op.stage]] * (fwd if op.kind == "F" else bwd) for op in ops if op.kind != "W")
        out.append({"tp": tp, "pp": sent[r] * pp_transfer_bytes(model, cfg), "dp": dp_bytes(params, dp)})
    return out


# ---- which layouts fit --------------------------------------------------------------------------------------
V_CHOICES = (2, 4)          # chunks per rank tried for schedules that take v


def candidate_layouts(model: Model, gpus: int, global_batch: int, mbs: int = 1):
    """(tp, pp, dp, m) with tp in 1, 2, 4, 8 (one node) dividing heads and kv_heads, tp * pp * dp = gpus,
    pp <= layers and dp * m * mbs = global batch."""
    for tp in (1, 2, 4, 8):
        if gpus % tp or model.heads % tp or model.kv_heads % tp:
            continue
        for pp in range(1, min(gpus // tp, model.layers) + 1):
            if (gpus // tp) % pp:
                continue
            dp = gpus // (tp * pp)
            if global_batch % (dp * mbs) == 0:
                yield tp, pp, dp, global_batch // (dp * mbs)


@lru_cache(maxsize=512)
def _compiled(name: str, pp: int, m: int, v: int | None):
    """The schedule checked and laid out once per process (fit_layouts tries the same shapes for every tp and
    cost model); None when the schedule's own rules refuse (p, m, v) (even p, m >= 2p, m % p, ...)."""
    from .schedules import build
    from .sim_compiled import CompiledPlan

    try:
        return CompiledPlan(build(name, pp, m, v=v))
    except ValueError:
        return None


def fit_layouts(model: Model, gpus: int, gpu_mem: float, global_batch: int, seq: int, mbs: int = 1,
                flops_per_s: float = 400e12, zero: int = 0, w_mem: float = 1.0, dtype_bytes: int = 2,
                recompute: tuple[str, ...] = RECOMPUTE, tp_bw: float | None = None,
                dp_bw: float | None = None, flash: bool = False) -> list[dict]:
    """Every (tp, pp, dp, schedule, v, m, recompute) whose busiest rank fits in ``gpu_mem`` bytes, fastest first.

    SP is on whenever tp > 1.  Each layout is simulated with F, B, W from ``chunk_times`` (FLOPs at
    ``flops_per_s`` per GPU, TP traffic at ``tp_bw``), PP transfers at ``dp_bw`` and each chunk's activation
    bytes, so its pipeline time, bubble and peak bytes come from the same timeline; ``step_s`` adds the DP
    all-reduce of the busiest rank's gradients at ``dp_bw`` (``dp_s``).  A bandwidth of None (the default)
    leaves that communication out.  A schedule whose own rules refuse (p, m, v) is skipped; with pp = 1 only
    1f1b (plain gradient accumulation) is tried."""
    from .costs import Costs
    from .schedules import REGISTRY
    from .sim import DeadlockError

    if dp_bw is not None:
        check_positive_number("dp_bw", dp_bw, "bytes/s")
    rows = []
    for tp, pp, dp, m in candidate_layouts(model, gpus, global_batch, mbs):
        shapes = [("1f1b", None)] if pp == 1 else [
            (name, v) for name, info in REGISTRY.items() for v in (V_CHOICES if "v" in info.params else (None,))]
        for name, v in shapes:
            cp = _compiled(name, pp, m, v)
            if cp is None or cp.plan.chunks > model.layers:
                continue
            params = rank_params(cp.plan, model, tp)
            if max(sum(static_bytes(n, dp, zero)) for n in params) > gpu_mem:
                continue
            dp_s = dp_bytes(max(params), dp) / dp_bw if dp_bw else 0.0
            for rc in recompute:
                cfg = ActivationConfig(seq, mbs, tp, tp > 1, rc, dtype_bytes, flash)
                f, b, w = chunk_times(model, cfg, cp.plan.chunks, flops_per_s, tp_bw)
                comm = pp_transfer_bytes(model, cfg) / dp_bw if dp_bw else 0.0
                try:
                    tl = cp.simulate(Costs(f=f, b=b, w=w, act=chunk_activation_bytes(model, cfg, cp.plan.chunks),
                                           w_mem=w_mem, comm=comm))
                except DeadlockError:
                    continue
                peak = max(pipeline_memory(cp.plan, model, cfg, dp=dp, zero=zero, timeline=tl).peak)
                if peak <= gpu_mem:
                    rows.append({"tp": tp, "pp": pp, "dp": dp, "schedule": name, "v": v, "m": m, "recompute": rc,
                                 "sp": cfg.sp, "peak_bytes": peak, "bubble": tl.bubble_ratio,
                                 "step_s": tl.makespan + dp_s, "dp_s": dp_s})
    rows.sort(key=lambda r: (r["step_s"], r["peak_bytes"]))
    return rows


__all__ = ["Model", "PRESETS", "preset", "ActivationConfig", "Term", "layer_terms", "eager_layer_terms",
           "layer_activation_bytes",
           "korthikanti_layer_bytes", "embedding_activation_bytes", "output_activation_bytes", "w_mem_share",
           "layers_per_chunk", "chunk_activation_bytes", "chunk_params", "rank_params", "static_bytes",
           "RankMemory", "PipelineMemory", "pipeline_memory", "layer_flops", "chunk_times", "ring_share",
           "tp_layer_bytes", "pp_transfer_bytes", "dp_bytes", "step_traffic", "candidate_layouts", "fit_layouts",
           "two_part_memory", "check_bytes", "GB", "MAX_BYTES", "RECOMPUTE"]
