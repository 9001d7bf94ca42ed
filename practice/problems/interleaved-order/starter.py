"""Exercise interleaved-order (chapter 4): the shortest warm-up of interleaved 1F1B, found by experiment."""


def interleaved_order(p, m, v, rank):
    """The ops rank ``rank`` runs in interleaved 1F1B with p ranks, m micro-batches and v chunks per rank.

    Rank r holds stages r, r + p, ..., r + (v - 1) * p.  Tokens name micro-batch and stage, e.g. "F0.s4".
    Raises ValueError unless p, m, v are positive ints, 0 <= rank < p and m is a multiple of p.
    """
    raise NotImplementedError  # TODO: your code here
