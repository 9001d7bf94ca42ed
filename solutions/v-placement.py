"""Exercise v-placement (chapter 6): the V-shaped (zig-zag) placement of model chunks used by ZB-V and DualPipeV."""


def v_placement(p, v=2):
    """placement[r] = the stages rank r holds (ascending): v * p stages, stage 0 on rank 0, every chunk of p
    consecutive stages spread over all ranks, neighbouring stages on the same or adjacent ranks.
    Raises ValueError unless p and v are positive ints.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("v", v)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    # A chunk visits every rank in steps of one rank, so it runs straight down or straight up; chunk 0 starts on
    # rank 0 and goes down, and each next chunk must start where the last one ended: down, up, down, ...
    placement = [[] for _ in range(p)]
    for c in range(v):
        for i in range(p):
            placement[i if c % 2 == 0 else p - 1 - i].append(c * p + i)
    return placement
    ### END SOLUTION


def p2p_hops(placement):
    """How many of the transfers stage s -> stage s + 1 cross ranks, for stages 0 .. S-1 in order.

    Raises ValueError unless the placement holds each of the stages 0 .. S-1 exactly once.
    """
    ### BEGIN SOLUTION
    owner = {}
    for r, stages in enumerate(placement):
        for s in stages:
            if type(s) is not int or s in owner:
                raise ValueError(f"stage {s!r} is not an int or is placed twice")
            owner[s] = r
    if sorted(owner) != list(range(len(owner))):
        raise ValueError(f"stages must be 0..{len(owner) - 1}, each exactly once")
    return sum(owner[s] != owner[s + 1] for s in range(len(owner) - 1))
    ### END SOLUTION
