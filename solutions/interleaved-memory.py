"""Exercise interleaved-memory (chapter 4): peak activations of torch's relaxed interleaved 1F1B, derived."""


def flex_peak(p, m, v, rank):
    """Peak activations of rank ``rank`` in torch's ScheduleInterleaved1F1B (the library's ``interleaved-flex``).

    In full-stage micro-batches (1F1B's rank 0 peaks at p): one chunk's activations are 1/v of a stage.
    Raises ValueError unless p, m, v, rank are ints with p >= 1, m >= 1, v >= 2, 0 <= rank < p, and m is a
    multiple of its number of rounds max(1, m // p).
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m), ("v", v), ("rank", rank)):
        if type(value) is not int:
            raise ValueError(f"{name} must be an int, got {value!r}")
    if p < 1 or m < 1 or v < 2:
        raise ValueError(f"need p >= 1, m >= 1 and v >= 2, got p={p}, m={m}, v={v}")
    if not 0 <= rank < p:
        raise ValueError(f"rank must be in 0..{p - 1}, got {rank}")
    rounds = max(1, m // p)
    if m % rounds:
        raise ValueError(f"m={m} is not a multiple of its {rounds} rounds (max(1, m // p) with p={p})")
    group = m // rounds
    # Micro-batches rotate through the chunks in groups of `group`, so the first backward (micro-batch 0 on the
    # last chunk) needs (v - 1) * group forwards of the other chunks plus 2(p - rank - 1) to cover the round trip
    # through the later ranks.  When it starts, those warm-up forwards and the first steady forward are alive, one
    # chunk (1/v of a stage) each; afterwards forwards and backwards alternate and the count never rises again.
    # A rank with fewer forwards than that in all (small m) runs every forward first.
    warm = (v - 1) * group + 2 * (p - rank - 1)
    return min(warm + 1, v * m) / v
    ### END SOLUTION
