"""Exercise micro-batch-order (chapter 7): the makespan of a permutation flow shop, and the best order on two stages
when some micro-batches are heavier on the first stage and others on the second."""


def flow_makespan(times, order):
    """Makespan of pushing micro-batches through the stages in ``order`` (forward only, no overtaking).

    times[i][s] = time of micro-batch i on stage s.  Stage s starts the k-th micro-batch of ``order`` when it has
    finished the (k-1)-th and stage s-1 has finished the k-th.  Raises ValueError unless ``order`` is a
    permutation of range(len(times)).
    """
    ### BEGIN SOLUTION
    if sorted(order) != list(range(len(times))):
        raise ValueError(f"order must be a permutation of 0..{len(times) - 1}, got {order!r}")
    stages = len(times[0]) if times else 0
    finish = [0.0] * stages          # finish[s]: when stage s finished its latest micro-batch
    for i in order:
        ready = 0.0
        for s in range(stages):
            finish[s] = max(finish[s], ready) + times[i][s]
            ready = finish[s]
    return float(finish[-1]) if stages else 0.0
    ### END SOLUTION


def two_stage_order(times):
    """An order minimising flow_makespan for two stages; times[i] = (a_i, b_i), in any mix.

    Raises ValueError when a micro-batch does not have exactly two stage times.
    """
    ### BEGIN SOLUTION
    # Johnson's rule (1954). Swapping neighbours j, k (j first) never hurts when min(a_j, b_k) <= min(a_k, b_j);
    # putting the jobs with a <= b first by increasing a, then the others by decreasing b, satisfies that for
    # every pair, and any order can be turned into this one by such swaps.
    if any(len(t) != 2 for t in times):
        raise ValueError("this rule is for two stages: every entry must be (a, b)")
    first = sorted((i for i, (a, b) in enumerate(times) if a <= b), key=lambda i: (times[i][0], i))
    last = sorted((i for i, (a, b) in enumerate(times) if a > b), key=lambda i: (-times[i][1], i))
    return first + last
    ### END SOLUTION
