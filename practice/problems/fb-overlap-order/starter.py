"""Exercise fb-overlap-order (chapter 6): F&B pairs on one route, folded into a V, at 1F1B's memory."""


def paired_order(p, m, rank):
    """The ops of rank ``rank`` on the V placement (rank r holds stages r and 2p-1-r), with F&B pairs ("F5.s1&B2.s6").

    Never slower than 1F1B, at least 10% faster when overlap <= 0.75 and m >= 2p; activations peak at p + 1/2 of
    1F1B's units (p when m < p).  Raises ValueError unless p, m are positive ints and 0 <= rank < p.
    """
    raise NotImplementedError  # TODO: your code here
