"""Chapter 6's one-directional pairing pasted as an answer: cell pairing-table's code builds ``paired_1f1b`` with
the deep warm-up 1 + 2(p-1-r) (rank r: warm-up forwards, then pairs F_{j+w} & B_j, then the last backwards), the
order the chapter shows is never slower than 1F1B; its tokens written with their stage as the exercise asks.  It
holds one stage per rank and peaks at 2p, so it fails here."""


def paired_order(p, m, rank):
    if type(p) is not int or type(m) is not int or type(rank) is not int or p < 1 or m < 1 or not 0 <= rank < p:
        raise ValueError("bad p, m or rank")
    w = min(m, 1 + 2 * (p - 1 - rank))
    order = [f"F{i}.s{rank}" for i in range(w)]
    order += [f"F{j + w}.s{rank}&B{j}.s{rank}" for j in range(m - w)]
    return order + [f"B{j}.s{rank}" for j in range(m - w, m)]
