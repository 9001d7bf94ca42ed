"""Chapter 2's printed rule as an answer to one-f-one-b-order.

Transcribes 02_simulator's cell `warm-up` ("stage s first runs p-s-1 warm-up forwards, then one forward, one
backward") and the 1F1B plan printed in `plan-1f1b`, for every stage, whatever the latency.
"""
import math


def one_f_one_b_orders(p, m, f, b, comm=0.0):
    for x in (p, m):
        if type(x) is not int or x < 1:
            raise ValueError("p and m must be positive ints")
    for x, positive in ((f, True), (b, True), (comm, False)):
        if type(x) not in (int, float) or not math.isfinite(x) or (x <= 0 if positive else x < 0):
            raise ValueError("bad cost")
    orders = []
    for s in range(p):
        warm = min(p - s - 1, m)
        ops = [f"F{i}" for i in range(warm)]
        for i in range(m - warm):
            ops += [f"F{warm + i}", f"B{i}"]
        ops += [f"B{i}" for i in range(m - warm, m)]
        orders.append(ops)
    return orders
