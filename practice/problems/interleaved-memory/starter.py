"""Exercise interleaved-memory (chapter 4): peak activations of interleaved 1F1B, derived."""


def interleaved_peak(p, m, v, rank):
    """Peak activations of rank ``rank`` in Megatron's interleaved 1F1B, in full-stage micro-batches.

    Raises ValueError unless p >= 1, v >= 2, m a multiple of p with m >= 2p, and 0 <= rank < p.
    """
    raise NotImplementedError  # TODO: your code here
