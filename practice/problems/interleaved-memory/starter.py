"""Exercise interleaved-memory (chapter 4): peak activations of torch's relaxed interleaved 1F1B, derived."""


def flex_peak(p, m, v, rank):
    """Peak activations of rank ``rank`` in torch's ScheduleInterleaved1F1B (the library's ``interleaved-flex``).

    In full-stage micro-batches (1F1B's rank 0 peaks at p): one chunk's activations are 1/v of a stage.
    Raises ValueError unless p, m, v, rank are ints with p >= 1, m >= 1, v >= 2, 0 <= rank < p, and m is a
    multiple of its number of rounds max(1, m // p).
    """
    raise NotImplementedError  # TODO: your code here
