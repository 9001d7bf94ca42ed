"""Exercise activation-bytes (chapter 8): the bytes one transformer layer keeps for its backward."""

from fractions import Fraction

RECOMPUTE = ("none", "selective", "full")


def _check(t, sp, recompute, s, **sizes):
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


def gpt_layer_bytes(s, b, h, a, t=1, sp=False, recompute="none"):
    """Bytes of one GPT layer's activations for one micro-batch on one TP rank (Korthikanti et al. 2022)."""
    ### BEGIN SOLUTION
    _check(t, sp, recompute, s, b=b, h=h, a=a)
    if a % t:
        raise ValueError(f"t={t} must divide the heads a={a}")
    sbh, scores = s * b * h, a * s * s * b
    terms = [(2 * sbh, False, False),        # LayerNorm input
             (2 * sbh, False, False),        # QKV input
             (4 * sbh, True, False),         # Q and K (for QK^T)
             (2 * scores, True, True),       # softmax output (softmax backward)
             (scores, True, True),           # dropout mask
             (2 * scores, True, True),       # dropout output (for the product with V)
             (2 * sbh, True, False),         # V
             (2 * sbh, True, False),         # output projection input
             (sbh, False, False),            # dropout mask after attention
             (2 * sbh, False, False),        # LayerNorm input
             (2 * sbh, False, False),        # fc1 input
             (8 * sbh, True, False),         # GeLU input (4h wide)
             (8 * sbh, True, False),         # fc2 input
             (sbh, False, False)]            # dropout mask after the MLP
    return _total(terms, t, sp, recompute, 2 * sbh)
    ### END SOLUTION


def llama_layer_bytes(s, b, h, a, kv_heads, ffn, t=1, sp=False, recompute="none"):
    """Bytes of one Llama 3 layer's activations (GQA, SwiGLU, no dropout) for one micro-batch on one TP rank."""
    ### BEGIN SOLUTION
    _check(t, sp, recompute, s, b=b, h=h, a=a, kv_heads=kv_heads, ffn=ffn)
    if a % t or kv_heads % t or h % a:
        raise ValueError(f"t={t} must divide a={a} and kv_heads={kv_heads}, and a must divide h={h}")
    sbh, g, scores = s * b * h, kv_heads * (h // a), a * s * s * b
    terms = [(2 * sbh, False, False),        # RMSNorm input
             (2 * sbh, False, False),        # QKV input
             (2 * sbh, True, False),         # Q after RoPE
             (2 * s * b * g, True, False),   # K after RoPE
             (2 * s * b * g, True, False),   # V
             (2 * scores, True, True),       # softmax output (no dropout: it also multiplies V)
             (2 * sbh, True, False),         # output projection input
             (2 * sbh, False, False),        # RMSNorm input
             (2 * sbh, False, False),        # gate/up input
             (2 * s * b * ffn, True, False),  # gate output (SiLU input)
             (2 * s * b * ffn, True, False),  # SiLU output (times up)
             (2 * s * b * ffn, True, False),  # up output (times SiLU)
             (2 * s * b * ffn, True, False)]  # down projection input
    return _total(terms, t, sp, recompute, 2 * sbh)
    ### END SOLUTION
