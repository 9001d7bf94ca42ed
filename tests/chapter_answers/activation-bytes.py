"""The chapters' printed formulas as an answer to activation-bytes: it must fail.

The GPT half transcribes the closed forms chapter 2 §4.1 prints (the table of its ``SETTINGS`` cell, Korthikanti et
al.: sbh(34 + 5as/h), sbh(10 + 24/t + 5as/(ht)), sbh/t (34 + 5as/h), 34sbh/t, sbh(10 + 24/t), 2sbh), which assume
an FFN 4h wide and 16-bit activations.  The Llama half counts the tensors of chapter 5 §2.1's table the same way
for the Llama block, at the chapters' 2 bytes per element.  ``ffn`` and ``dtype_bytes`` are accepted and, as in the
printed formulas, play no part.
"""

from fractions import Fraction


def _check(s, b, h, a, t, sp, recompute):
    for value in (s, b, h, a, t):
        if type(value) is not int or value < 1:
            raise ValueError(f"sizes must be positive ints, got {value!r}")
    if recompute not in ("none", "selective", "full") or a % t or (sp and (t == 1 or s % t)):
        raise ValueError("bad arguments")


def gpt_layer_bytes(s, b, h, a, t=1, sp=False, recompute="none", ffn=None, dtype_bytes=2):
    _check(s, b, h, a, t, sp, recompute)
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


def llama_layer_bytes(s, b, h, a, kv_heads, ffn, t=1, sp=False, recompute="none", dtype_bytes=2):
    _check(s, b, h, a, t, sp, recompute)
    if kv_heads % t:
        raise ValueError("t must divide kv_heads")
    sbh, g, scores = s * b * h, kv_heads * (h // a), a * s * s * b
    if recompute == "full":
        return round(Fraction(2 * sbh, t) if sp else Fraction(2 * sbh))
    whole = 4 * 2 * sbh                                       # two norm inputs, QKV input, gate/up input
    split = 2 * sbh + 2 * 2 * s * b * g + 2 * sbh + 4 * 2 * s * b * ffn   # Q, K, V, out proj in, SwiGLU's four
    core = 0 if recompute == "selective" else 2 * scores
    return round((Fraction(whole, t) if sp else Fraction(whole)) + Fraction(split + core, t))
