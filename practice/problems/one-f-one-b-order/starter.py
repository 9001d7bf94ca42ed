"""Exercise one-f-one-b-order (chapter 2): the order of operations on one stage of a 1F1B pipeline."""


def one_f_one_b_order(p, m, stage):
    """The ops stage ``stage`` of a p-stage 1F1B pipeline runs for m micro-batches, e.g. ["F0", "F1", "B0", ...].

    Warm-up: min(p - stage - 1, m) forwards; steady state: one forward then one backward; cool-down: the
    remaining backwards.  Raises ValueError unless p, m are positive ints and 0 <= stage < p.
    """
    raise NotImplementedError  # TODO: your code here
