"""Chapter 4's printed order as an answer to interleaved-order.

Transcribes 04_interleaved's cell `warmup`: the rotation in groups of p that `rotation_rule` checks (forwards group by
group and chunk by chunk, backwards with the chunks reversed) and `megatron_warmup`, Megatron's warm-up of
2(p-r-1) + (v-1)p forwards (every forward when m == p), then one forward one backward, then the backwards left.
"""


def interleaved_order(p, m, v, rank):
    for value in (p, m, v, rank):
        if type(value) is not int:
            raise ValueError("arguments must be ints")
    if p < 1 or m < 1 or v < 1 or not 0 <= rank < p or m % p:
        raise ValueError("need positive p, m, v, 0 <= rank < p and m a multiple of p")
    forwards = [f"F{g * p + i}.s{c * p + rank}" for g in range(m // p) for c in range(v) for i in range(p)]
    backwards = [f"B{g * p + i}.s{(v - 1 - c) * p + rank}" for g in range(m // p) for c in range(v) for i in range(p)]
    total = v * m
    warm = total if m == p else min(2 * (p - rank - 1) + (v - 1) * p, total)
    order = forwards[:warm]
    for j in range(total - warm):
        order += [forwards[warm + j], backwards[j]]
    return order + backwards[total - warm:]
