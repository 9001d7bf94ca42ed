"""Chapter 1's printed code as an answer to choose-m.

Transcribes 01_bubble's cell after `best-m`: the search over m among the powers of two that divide the rows of
an iteration (`ms = [m for m in sizes if m <= GLOBAL_ROWS]`), each m's iteration time from the formula of cell
`derive`, (m+p-1)(F+B) with F = t0 + c*b and B = 2F, the fastest kept.  That cell has no memory cap.
"""
import math


def choose_m(p, batch, t0, c, act=0.0, cap=None):
    for x in (p, batch):
        if type(x) is not int or x < 1:
            raise ValueError("p and batch must be positive ints")
    for x in (t0, c, act) + (() if cap is None else (cap,)):
        if type(x) not in (int, float) or not math.isfinite(x) or x < 0:
            raise ValueError("bad number")
    ms = [2 ** k for k in range(batch.bit_length()) if batch % 2 ** k == 0]
    makespans = {m: (m + p - 1) * 3 * (t0 + c * batch / m) for m in ms}
    return min(makespans, key=makespans.get)
