"""Chapter 4's printed peak formula as an answer to interleaved-memory.

Transcribes 04_interleaved's cell `peaks` (rank r peaks at p + (p-1-2r)/v, the chapter's `peak_formula`), with
the relaxed order's argument checks of cell `flex-rule` (rounds max(1, m // p) must divide m) added as a learner
would: correct for Megatron's order with m a multiple of p and m >= 2p, wrong for the other m torch accepts.
"""


def flex_peak(p, m, v, rank):
    for value in (p, m, v, rank):
        if type(value) is not int:
            raise ValueError("arguments must be ints")
    if p < 1 or m < 1 or v < 2 or not 0 <= rank < p:
        raise ValueError("need p >= 1, m >= 1, v >= 2 and 0 <= rank < p")
    if m % max(1, m // p):
        raise ValueError("m must be a multiple of its number of rounds")
    return p + (p - 1 - 2 * rank) / v
