"""Exercise one-f-one-b-order (chapter 2): the shortest warm-up of a 1F1B stage, found rather than given."""


def one_f_one_b_order(p, m, stage):
    """The ops stage ``stage`` of a p-stage 1F1B pipeline runs for m micro-batches, e.g. ["F0", "F1", "B0", ...].

    Warm-up forwards, then one forward one backward, then the remaining backwards, with the shortest warm-up
    that neither deadlocks nor lengthens the makespan.  Raises ValueError unless p, m are positive ints and
    0 <= stage < p.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m), ("stage", stage)):
        if type(value) is not int:
            raise ValueError(f"{name} must be an int, got {value!r}")
    if p < 1 or m < 1:
        raise ValueError(f"p and m must be positive, got p={p}, m={m}")
    if not 0 <= stage < p:
        raise ValueError(f"stage must be in 0..{p - 1}, got {stage}")
    # Stage s must have started the p - s - 1 forwards that are still in flight downstream when the first
    # gradient comes back; fewer leaves the pipe half empty, more only stores more activations.
    warm = min(p - stage - 1, m)
    order = [f"F{i}" for i in range(warm)]
    for i in range(m - warm):
        order += [f"F{warm + i}", f"B{i}"]
    order += [f"B{i}" for i in range(m - warm, m)]
    return order
    ### END SOLUTION
