"""Exercise zb-h2-order (chapter 5): an order with no idle time inside any rank's window, at 2p-1 activations."""


def zb_h2_order(p, m, rank):
    """The ops of rank ``rank`` in a ZB-H2-like order: peak <= 2p-1, no idle with F = B = W when m >= 2p-1.

    Raises ValueError unless p, m are positive ints and 0 <= rank < p.
    """
    raise NotImplementedError  # TODO: your code here
