"""Chapter 5's printed ZB-H1 order pasted as an answer: cell read-rank0 and the code cell after it print rank 0's
ZB-H1 order for p=4, m=8 (F0 F1 F2 F3 B0 W0 F4 B1 W1 ... B7 W7), which is 1F1B with each W right after its B;
generalised to every rank as 1F1B's warm-up of p - r - 1 forwards, then F / B-W pairs."""


def zb_h1_order(p, m, rank):
    if type(p) is not int or type(m) is not int or type(rank) is not int or p < 1 or m < 1 or not 0 <= rank < p:
        raise ValueError("bad p, m or rank")
    warm = min(p - rank - 1, m)
    order = [f"F{i}" for i in range(warm)]
    for j in range(m):
        if warm + j < m:
            order.append(f"F{warm + j}")
        order += [f"B{j}", f"W{j}"]
    return order
