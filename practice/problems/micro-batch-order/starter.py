"""Exercise micro-batch-order (chapter 7): the makespan of a permutation flow shop, and the best order on two stages
when some micro-batches are heavier on the first stage and others on the second."""


def flow_makespan(times, order):
    """Makespan of pushing micro-batches through the stages in ``order`` (forward only, no overtaking).

    times[i][s] = time of micro-batch i on stage s.  Stage s starts the k-th micro-batch of ``order`` when it has
    finished the (k-1)-th and stage s-1 has finished the k-th.  Raises ValueError unless ``order`` is a
    permutation of range(len(times)).
    """
    raise NotImplementedError  # TODO: your code here


def two_stage_order(times):
    """An order minimising flow_makespan for two stages; times[i] = (a_i, b_i), in any mix.

    Raises ValueError when a micro-batch does not have exactly two stage times.
    """
    raise NotImplementedError  # TODO: your code here
