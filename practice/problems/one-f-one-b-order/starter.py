"""Exercise one-f-one-b-order (chapter 2): the shortest warm-up of a 1F1B stage, found rather than given."""


def one_f_one_b_order(p, m, stage):
    """The ops stage ``stage`` of a p-stage 1F1B pipeline runs for m micro-batches, e.g. ["F0", "F1", "B0", ...].

    Warm-up forwards, then one forward one backward, then the remaining backwards, with the shortest warm-up
    that neither deadlocks nor lengthens the makespan.  Raises ValueError unless p, m are positive ints and
    0 <= stage < p.
    """
    raise NotImplementedError  # TODO: your code here
