"""Chapter 5's printed ZB-H2 order pasted as an answer: cell read-rank0 and the code cell after it print rank 0's
ZB-H2 order for p=4, m=8 (2p-1 = 7 forwards, then B0 W0 B1 F7 B2 W1 ...); generalised to every rank as 2p-1
warm-up forwards, then each B followed by a forward while any is left, else by the oldest W."""


def zb_h2_order(p, m, rank):
    if type(p) is not int or type(m) is not int or type(rank) is not int or p < 1 or m < 1 or not 0 <= rank < p:
        raise ValueError("bad p, m or rank")
    nf = min(2 * p - 1, m)
    order = [f"F{i}" for i in range(nf)]
    nw = 0
    for j in range(m):
        order.append(f"B{j}")
        if nf < m:
            order.append(f"F{nf}")
            nf += 1
        else:
            order.append(f"W{nw}")
            nw += 1
    return order + [f"W{j}" for j in range(nw, m)]
