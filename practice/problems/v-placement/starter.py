"""Exercise v-placement (chapter 6): the V-shaped (zig-zag) placement of model chunks used by ZB-V and DualPipeV."""


def v_placement(p, v=2):
    """placement[r] = the stages rank r holds (ascending) when v * p stages zig-zag over p ranks.

    Chunk c holds stages c*p .. c*p + p - 1; even chunks go down the ranks (stage c*p + i on rank i), odd chunks
    come back up (stage c*p + i on rank p - 1 - i).  Raises ValueError unless p and v are positive ints.
    """
    raise NotImplementedError  # TODO: your code here


def p2p_hops(placement):
    """How many of the transfers stage s -> stage s + 1 cross ranks, for stages 0 .. S-1 in order.

    Raises ValueError unless the placement holds each of the stages 0 .. S-1 exactly once.
    """
    raise NotImplementedError  # TODO: your code here
