"""Exercise zb-h2-order (chapter 5): an order with no idle time inside any rank's window, at 2p-1 activations."""


def zb_h2_order(p, m, rank):
    """The ops of rank ``rank`` in a ZB-H2-like order: peak <= 2p-1, no idle with F = B = W when m >= 2p-1.

    Raises ValueError unless p, m are positive ints and 0 <= rank < p.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m), ("rank", rank)):
        if type(value) is not int:
            raise ValueError(f"{name} must be an int, got {value!r}")
    if p < 1 or m < 1:
        raise ValueError(f"p and m must be positive, got p={p}, m={m}")
    if not 0 <= rank < p:
        raise ValueError(f"rank must be in 0..{p - 1}, got {rank}")
    # Play the whole pipeline on unit-time ops: each tick every rank runs a ready B (someone waits for it), else
    # a ready F while fewer than 2p-1 micro-batches are alive (rank 0 needs 2p-1 forwards to cover the round trip
    # of its first micro-batch), else its oldest W (nobody waits for W: it fills what would be a hole).
    done_f = [[None] * m for _ in range(p)]
    done_b = [[None] * m for _ in range(p)]
    nf, nb, nw = [0] * p, [0] * p, [0] * p
    orders = [[] for _ in range(p)]
    t = 0
    while min(nw) < m:
        for r in range(p):
            i = nb[r]
            if i < m and done_f[r][i] is not None and done_f[r][i] <= t and (
                    r == p - 1 or (done_b[r + 1][i] is not None and done_b[r + 1][i] <= t)):
                orders[r].append(f"B{i}")
                done_b[r][i] = t + 1
                nb[r] += 1
                continue
            i = nf[r]
            if i < m and nf[r] - nw[r] < 2 * p - 1 and (
                    r == 0 or (done_f[r - 1][i] is not None and done_f[r - 1][i] <= t)):
                orders[r].append(f"F{i}")
                done_f[r][i] = t + 1
                nf[r] += 1
                continue
            if nw[r] < nb[r]:
                orders[r].append(f"W{nw[r]}")
                nw[r] += 1
        t += 1
    return orders[rank]
    ### END SOLUTION
