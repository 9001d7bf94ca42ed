"""Exercise v-placement (chapter 6): the V-shaped (zig-zag) placement of model chunks used by ZB-V and DualPipeV."""


def v_placement(p, v=2):
    """placement[r] = the stages rank r holds (ascending): v * p stages, stage 0 on rank 0, every chunk of p
    consecutive stages spread over all ranks, neighbouring stages on the same or adjacent ranks.
    Raises ValueError unless p and v are positive ints.
    """
    raise NotImplementedError  # TODO: your code here


def p2p_hops(placement):
    """How many of the transfers stage s -> stage s + 1 cross ranks, for stages 0 .. S-1 in order.

    Raises ValueError unless the placement holds each of the stages 0 .. S-1 exactly once.
    """
    raise NotImplementedError  # TODO: your code here
