"""Exercise activation-bytes (chapter 8): the bytes one transformer layer keeps for its backward."""

from fractions import Fraction

RECOMPUTE = ("none", "selective", "full")


def _check(t, sp, recompute, s, **sizes):
    """One clear ValueError for a bad argument: sizes are positive ints, recompute one of three, SP needs t > 1."""
    for name, value in {"s": s, "t": t, **sizes}.items():
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    if sp is not True and sp is not False:
        raise ValueError(f"sp must be a bool, got {sp!r}")
    if sp and (t == 1 or s % t):
        raise ValueError(f"sequence parallelism needs t > 1 dividing s, got t={t}, s={s}")


def _total(terms, t, sp, recompute, layer_input):
    """terms: (bytes without parallelism, split by TP, attention core) for every tensor the layer keeps."""
    if recompute == "full":
        return round(Fraction(layer_input, t) if sp else Fraction(layer_input))
    return round(sum(Fraction(size, t) if (split or sp) else Fraction(size)
                     for size, split, core in terms if not (core and recompute == "selective")))


def gpt_layer_bytes(s, b, h, a, t=1, sp=False, recompute="none", ffn=None, dtype_bytes=2):
    """Bytes of one GPT layer's activations for one micro-batch on one TP rank (Korthikanti et al. 2022's block:
    LayerNorm, attention with dropout, a GeLU MLP of width ``ffn`` (default 4h), dropout), with ``dtype_bytes``
    per activation element and 1 byte per dropout-mask element."""
    ### BEGIN SOLUTION
    f = 4 * h if ffn is None else ffn
    _check(t, sp, recompute, s, b=b, h=h, a=a, ffn=f, dtype_bytes=dtype_bytes)
    if a % t:
        raise ValueError(f"t={t} must divide the heads a={a}")
    d, sbh, sbf, scores = dtype_bytes, s * b * h, s * b * f, a * s * s * b
    terms = [(d * sbh, False, False),        # LayerNorm input
             (d * sbh, False, False),        # QKV input
             (2 * d * sbh, True, False),     # Q and K (for QK^T)
             (d * scores, True, True),       # softmax output (softmax backward)
             (scores, True, True),           # dropout mask (1 byte per element)
             (d * scores, True, True),       # dropout output (for the product with V)
             (d * sbh, True, False),         # V
             (d * sbh, True, False),         # output projection input
             (sbh, False, False),            # dropout mask after attention
             (d * sbh, False, False),        # LayerNorm input
             (d * sbh, False, False),        # fc1 input
             (d * sbf, True, False),         # GeLU input (f wide)
             (d * sbf, True, False),         # fc2 input
             (sbh, False, False)]            # dropout mask after the MLP
    return _total(terms, t, sp, recompute, d * sbh)
    ### END SOLUTION


def llama_layer_bytes(s, b, h, a, kv_heads, ffn, t=1, sp=False, recompute="none", dtype_bytes=2):
    """Bytes of one Llama 3 layer's activations (GQA, SwiGLU, no dropout) for one micro-batch on one TP rank,
    with ``dtype_bytes`` per element."""
    ### BEGIN SOLUTION
    _check(t, sp, recompute, s, b=b, h=h, a=a, kv_heads=kv_heads, ffn=ffn, dtype_bytes=dtype_bytes)
    if a % t or kv_heads % t or h % a or a % kv_heads:
        raise ValueError(f"t={t} must divide a={a} and kv_heads={kv_heads}, kv_heads must divide a and a must "
                         f"divide h={h}")
    d, sbh, g, scores = dtype_bytes, s * b * h, kv_heads * (h // a), a * s * s * b
    terms = [(d * sbh, False, False),        # RMSNorm input
             (d * sbh, False, False),        # QKV input
             (d * sbh, True, False),         # Q after RoPE
             (d * s * b * g, True, False),   # K after RoPE
             (d * s * b * g, True, False),   # V
             (d * scores, True, True),       # softmax output (no dropout: it also multiplies V)
             (d * sbh, True, False),         # output projection input
             (d * sbh, False, False),        # RMSNorm input
             (d * sbh, False, False),        # gate/up input
             (d * s * b * ffn, True, False),  # gate output (SiLU input)
             (d * s * b * ffn, True, False),  # SiLU output (times up)
             (d * s * b * ffn, True, False),  # up output (times SiLU)
             (d * s * b * ffn, True, False)]  # down projection input
    return _total(terms, t, sp, recompute, d * sbh)
    ### END SOLUTION
