"""Chapter 6's V placement pasted as an answer: cell zbv-placement prints ZB-V's placement (p = 4: [0, 7], [1, 6],
[2, 5], [3, 4]) and cell zbv says rank r holds chunks r and 2p-1-r; the forward path it prints (rank after rank,
counting the changes) gives p2p_hops.  That is the placement for v = 2 only."""


def v_placement(p, v=2):
    if type(p) is not int or type(v) is not int or p < 1 or v < 1:
        raise ValueError("p and v must be positive ints")
    return [sorted([r, 2 * p - 1 - r]) for r in range(p)]


def p2p_hops(placement):
    owner = {}
    for r, stages in enumerate(placement):
        for s in stages:
            if type(s) is not int or s in owner:
                raise ValueError(f"stage {s!r} is not an int or is placed twice")
            owner[s] = r
    if sorted(owner) != list(range(len(owner))):
        raise ValueError("stages must be 0..S-1, each once")
    path = [owner[s] for s in range(len(owner))]
    return sum(a != b for a, b in zip(path, path[1:]))
