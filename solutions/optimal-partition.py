"""Exercise optimal-partition (chapter 7): cut uneven layers into p contiguous stages with the smallest bottleneck."""


def partition(costs, p):
    """Cut the layers (costs[i] = time of layer i) into p non-empty contiguous stages.

    Returns the number of layers of each stage (p positive ints summing to len(costs)) such that the slowest
    stage is as fast as possible.  Raises ValueError unless p is a positive int <= len(costs) and every cost is a
    non-negative number.
    """
    ### BEGIN SOLUTION
    n = len(costs)
    if type(p) is not int or not 1 <= p <= n:
        raise ValueError(f"p must be an int in 1..{n} (one layer per stage at least), got {p!r}")
    if any(type(c) not in (int, float) or c < 0 for c in costs):
        raise ValueError("costs must be non-negative numbers")
    prefix = [0.0]
    for c in costs:
        prefix.append(prefix[-1] + c)
    inf = float("inf")
    # best[k][j]: smallest bottleneck of the first j layers cut into k stages; cut[k][j]: where the last one starts
    best = [[inf] * (n + 1) for _ in range(p + 1)]
    cut = [[0] * (n + 1) for _ in range(p + 1)]
    best[0][0] = 0.0
    for k in range(1, p + 1):
        for j in range(k, n + 1):
            for i in range(k - 1, j):
                value = max(best[k - 1][i], prefix[j] - prefix[i])
                if value < best[k][j]:
                    best[k][j], cut[k][j] = value, i
    sizes, j = [], n
    for k in range(p, 0, -1):
        sizes.append(j - cut[k][j])
        j = cut[k][j]
    return sizes[::-1]
    ### END SOLUTION
