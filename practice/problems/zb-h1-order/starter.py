"""Exercise zb-h1-order (chapter 5): the ZB-H1 zero-bubble order of one rank (backward split into B and W)."""


def zb_h1_order(p, m, rank):
    """The ops rank ``rank`` runs in a ZB-H1 order with p ranks and m micro-batches, e.g. ["F0", "F1", "B0", ...].

    Peak activations <= p, makespan m(F+B+W) + (p-1)(F+B-W) when m >= p and W <= min(F, B).
    Raises ValueError unless p, m are positive ints and 0 <= rank < p.
    """
    raise NotImplementedError  # TODO: your code here
