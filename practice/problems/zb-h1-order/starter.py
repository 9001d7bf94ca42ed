"""Exercise zb-h1-order (chapter 5): the ZB-H1 zero-bubble order of one rank (backward split into B and W)."""


def zb_h1_order(p, m, rank):
    """The ops rank ``rank`` runs in ZB-H1 with p ranks and m micro-batches, e.g. ["F0", "F1", "B0", "W0", ...].

    Like 1F1B (warm-up of min(p - rank - 1, m) forwards, then one F one B, then the remaining Bs), except that
    each B is an input gradient and the weight gradients W are deferred: rank r keeps up to r of them pending,
    doing the oldest pending W right after a B that makes more than r pending; the rest come at the end.
    Raises ValueError unless p, m are positive ints and 0 <= rank < p.
    """
    raise NotImplementedError  # TODO: your code here
