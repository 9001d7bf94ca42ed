"""Exercise zb-h1-order (chapter 5): the ZB-H1 zero-bubble order of one rank (backward split into B and W)."""


def zb_h1_order(p, m, rank):
    """The ops rank ``rank`` runs in a ZB-H1 order with p ranks and m micro-batches, e.g. ["F0", "F1", "B0", ...].

    Peak activations <= p, makespan m(F+B+W) + (p-1)(F+B-W) when m >= p and W <= min(F, B).
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
    warm = min(p - rank - 1, m)
    order = [f"F{i}" for i in range(warm)]
    pending = []

    def backward(j):
        order.append(f"B{j}")
        pending.append(j)
        # 1F1B's shape keeps the peak at p; rank r may hold r Ws back: its Bs then reach rank r-1 sooner, and
        # the held Ws fill the r slots of the cool-down where rank r would otherwise wait.
        if len(pending) > rank:
            order.append(f"W{pending.pop(0)}")

    for j in range(m - warm):
        order.append(f"F{warm + j}")
        backward(j)
    for j in range(m - warm, m):
        backward(j)
    return order + [f"W{j}" for j in pending]
    ### END SOLUTION
