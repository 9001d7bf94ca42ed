"""Exercise interleaved-memory (chapter 4): peak activations of interleaved 1F1B, derived."""


def interleaved_peak(p, m, v, rank):
    """Peak activations of rank ``rank`` in Megatron's interleaved 1F1B, in full-stage micro-batches.

    Raises ValueError unless p >= 1, v >= 2, m a multiple of p with m >= 2p, and 0 <= rank < p.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m), ("v", v), ("rank", rank)):
        if type(value) is not int:
            raise ValueError(f"{name} must be an int, got {value!r}")
    if p < 1 or v < 2 or m < 2 * p or m % p:
        raise ValueError(f"need p >= 1, v >= 2 and m a multiple of p with m >= 2p, got p={p}, m={m}, v={v}")
    if not 0 <= rank < p:
        raise ValueError(f"rank must be in 0..{p - 1}, got {rank}")
    # The warm-up forwards plus the first steady forward are alive when the first backward ends; each is one
    # chunk, 1/v of a stage.  Rank 0: (2(p-1) + (v-1)p + 1) / v = p + (p-1)/v: more than 1F1B's p for any v.
    warm = 2 * (p - rank - 1) + (v - 1) * p
    return min(warm + 1, m * v) / v
    ### END SOLUTION
