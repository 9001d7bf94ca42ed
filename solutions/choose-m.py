"""Exercise choose-m (chapter 1): the micro-batch count that minimises a 1F1B iteration under overhead and memory."""

import math


def choose_m(p, batch, t0, c, act=0.0, cap=None):
    """The divisor m of ``batch`` with the shortest 1F1B iteration (smallest m on ties) whose rank-0 peak fits ``cap``.

    A micro-batch of b samples takes t0 + c*b forward and twice that backward on every stage and keeps act*b bytes
    of activations while it is alive.  Raises ValueError for bad arguments or when no m fits.
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("batch", batch)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    for name, value in (("t0", t0), ("c", c), ("act", act)) + ((("cap", cap),) if cap is not None else ()):
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    best = None
    for m in range(1, batch + 1):
        if batch % m:
            continue
        b = batch / m
        if cap is not None and min(m, p) * act * b > cap:
            continue
        # 1F1B with uniform stages: m + p - 1 slots of one forward plus one backward.
        makespan = (m + p - 1) * 3 * (t0 + c * b)
        if best is None or makespan < best[0] - 1e-12 * max(1.0, makespan):
            best = (makespan, m)
    if best is None:
        raise ValueError(f"no m fits the memory cap {cap}")
    return best[1]
    ### END SOLUTION
