"""Exercise choose-m (chapter 1): the micro-batch count that minimises a 1F1B iteration under overhead and memory."""

import math


def choose_m(p, batch, t0, c, act=0.0, cap=None):
    """The divisor m of ``batch`` with the shortest 1F1B iteration (smallest m on ties) whose rank-0 peak fits ``cap``.

    A micro-batch of b samples takes t0 + c*b forward and twice that backward on every stage and keeps act*b bytes
    of activations while it is alive.  Raises ValueError for bad arguments or when no m fits.
    """
    raise NotImplementedError  # TODO: your code here
