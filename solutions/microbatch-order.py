"""Exercise microbatch-order (chapter 7): the order of uneven micro-batches through the pipeline and its makespan."""


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


def johnson_order(times):
    """An order minimising flow_makespan for two stages; times[i] = (a_i, b_i).

    Raises ValueError when a micro-batch does not have exactly two stage times.
    """
    ### BEGIN SOLUTION
    # Johnson's rule (1954): swapping neighbours j, k never hurts when min(a_j, b_k) <= min(a_k, b_j), and this
    # order satisfies that for every pair.
    if any(len(t) != 2 for t in times):
        raise ValueError("Johnson's rule is for two stages: every entry must be (a, b)")
    first = sorted((i for i, (a, b) in enumerate(times) if a <= b), key=lambda i: (times[i][0], i))
    last = sorted((i for i, (a, b) in enumerate(times) if a > b), key=lambda i: (-times[i][1], i))
    return first + last
    ### END SOLUTION
