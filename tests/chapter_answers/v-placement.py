"""Chapter 6's V placement pasted as an answer: cell zbv-placement prints ZB-V's placement (p = 4: [0, 7], [1, 6],
[2, 5], [3, 4]) and cell zbv says rank r holds chunks r and 2p-1-r; the forward path it prints (rank after rank,
counting the changes) gives p2p_hops.  That is the placement for v = 2 only."""


def v_placement(p, v=2):
    if type(p) is not int or type(v) is not int or p < 1 or v < 1:
        raise ValueError("p and v must be positive ints")
    return [sorted([r, 2 * p - 1 - r]) for r in range(p)]


def p2p_hops(placement):
    owner = {s: r for r, stages in enumerate(placement) for s in stages}          # the chapter's rank_of_stage()
    if sorted(owner) != list(range(sum(map(len, placement)))):
        raise ValueError("each stage 0..S-1 exactly once")
    path = [owner[s] for s in sorted(owner)]                                      # the chapter's forward path
    return sum(a != b for a, b in zip(path, path[1:]))
