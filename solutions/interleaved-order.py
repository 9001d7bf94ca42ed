"""Exercise interleaved-order (chapter 4): the shortest warm-up of interleaved 1F1B, found by experiment."""


def interleaved_order(p, m, v, rank):
    """The ops rank ``rank`` runs in interleaved 1F1B with p ranks, m micro-batches and v chunks per rank.

    Rank r holds stages r, r + p, ..., r + (v - 1) * p.  Tokens name micro-batch and stage, e.g. "F0.s4".
    Raises ValueError unless p, m, v are positive ints, 0 <= rank < p and m is a multiple of p.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m), ("v", v), ("rank", rank)):
        if type(value) is not int:
            raise ValueError(f"{name} must be an int, got {value!r}")
    if p < 1 or m < 1 or v < 1:
        raise ValueError(f"p, m and v must be positive, got p={p}, m={m}, v={v}")
    if not 0 <= rank < p:
        raise ValueError(f"rank must be in 0..{p - 1}, got {rank}")
    if m % p:
        raise ValueError(f"m must be a multiple of p, got m={m}, p={p}")
    total = m * v

    def op(kind, k):
        chunk = (k % (p * v)) // p           # groups of p micro-batches pass chunk 0, then chunk 1, ...
        if kind == "B":
            chunk = v - 1 - chunk
        mb = (k // (p * v)) * p + k % p
        return f"{kind}{mb}.s{chunk * p + rank}"

    # Found by simulation: without latency p - r - 1 forwards beyond one full round of the other chunks are
    # enough; Megatron's 2(p - r - 1) + (v - 1)p keeps p - r - 1 more in flight to hide transfer latency.
    warm = (p - rank - 1) + (v - 1) * p
    warm = min(warm, total)
    order = [op("F", k) for k in range(warm)]
    for j in range(total - warm):
        order += [op("F", warm + j), op("B", j)]
    order += [op("B", j) for j in range(total - warm, total)]
    return order
    ### END SOLUTION
