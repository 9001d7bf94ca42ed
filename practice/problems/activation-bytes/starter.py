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
    raise NotImplementedError  # TODO: your code here


def llama_layer_bytes(s, b, h, a, kv_heads, ffn, t=1, sp=False, recompute="none", dtype_bytes=2):
    """Bytes of one Llama 3 layer's activations (GQA, SwiGLU, no dropout) for one micro-batch on one TP rank,
    with ``dtype_bytes`` per element."""
    raise NotImplementedError  # TODO: your code here
