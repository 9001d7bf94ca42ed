"""Exercise greedy-partition-bug (chapter 7): the seed blog's greedy partition, its bug shown by failing cases, and
a fixed partition that uses every stage and counts communication."""


def seed_partition(layer_times, num_stages):
    """The seed blog's greedy partition as its listing behaves (given: read it, do not change it).

    Walks the layers in order and closes the current stage as soon as its running sum reaches
    sum(layer_times) / num_stages, provided enough layers remain to give each later stage one.  Returns the
    stages as lists of layer indices, in order.
    """
    target = sum(layer_times) / num_stages
    stages, current, running = [], [], 0.0
    for i, t in enumerate(layer_times):
        current.append(i)
        running += t
        stages_left = num_stages - len(stages) - 1
        layers_left = len(layer_times) - i - 1
        if running >= target and stages_left > 0 and layers_left >= stages_left:
            stages.append(current)
            current, running = [], 0.0
    if current:
        stages.append(current)
    return stages


def empty_stage_case():
    """(layer_times, p): positive layer times and 2 <= p <= len(layer_times) for which seed_partition leaves at
    least one of the p stages without a layer."""
    ### BEGIN SOLUTION
    # The last layer alone outweighs total/p = 4: the first stage fills up to the target and closes, the second
    # one can only close with a layer left for each later stage, so it swallows the heavy last layer too and
    # nothing is left for stages 2 and 3.
    return [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0], 4
    ### END SOLUTION


def slow_step_case():
    """(layer_times, p): seed_partition fills all p stages, yet 1F1B with 2p micro-batches (F = B = W = a stage's
    time) takes at least 1.25 times as long with its cut as with the exact min-max cut."""
    ### BEGIN SOLUTION
    # The seed only cuts *after* a stage passes the target (8 here), so the heavy layer where the cut belongs lands
    # in the stage before it: stage 0 costs 15, while the exact cut [1, 1, 5 | 8, 1] has a bottleneck of 9.
    return [1.0, 1.0, 5.0, 8.0, 1.0], 2
    ### END SOLUTION


def fixed_partition(layer_times, p, comm=0.0):
    """Cut the layers into exactly p non-empty contiguous stages with the smallest bottleneck.

    A stage costs the sum of its layers plus the communication of the cuts at its two ends: cutting between layer
    i and i + 1 costs comm[i] to both stages beside the cut (comm may also be one number for every cut).  Returns
    the stages as lists of layer indices, in order.  Raises ValueError unless p is an int in 1..len(layer_times),
    every layer time is a non-negative number, and comm is a non-negative number or one per cut.
    """
    ### BEGIN SOLUTION
    n = len(layer_times)
    if type(p) is not int or not 1 <= p <= n:
        raise ValueError(f"p must be an int in 1..{n} (every stage needs a layer), got {p!r}")
    if any(type(t) not in (int, float) or not 0 <= t < float("inf") for t in layer_times):
        raise ValueError("layer times must be finite non-negative numbers")
    cut = [comm] * (n - 1) if type(comm) in (int, float) else list(comm)
    if len(cut) != n - 1 or any(type(c) not in (int, float) or not 0 <= c < float("inf") for c in cut):
        raise ValueError(f"comm must be a non-negative number or {n - 1} of them, one per cut")
    prefix = [0.0]
    for t in layer_times:
        prefix.append(prefix[-1] + t)

    def stage(i, j):          # layers i..j-1, with the cuts before and after it
        return prefix[j] - prefix[i] + (cut[i - 1] if i > 0 else 0.0) + (cut[j - 1] if j < n else 0.0)

    inf = float("inf")
    # best[k][j]: the smallest bottleneck of layers[:j] in k stages; start[k][j]: where the k-th stage starts
    best = [[inf] * (n + 1) for _ in range(p + 1)]
    start = [[0] * (n + 1) for _ in range(p + 1)]
    best[0][0] = 0.0
    for k in range(1, p + 1):
        for j in range(k, n - (p - k) + 1):
            for i in range(k - 1, j):
                value = max(best[k - 1][i], stage(i, j))
                if value < best[k][j]:
                    best[k][j], start[k][j] = value, i
    stages, j = [], n
    for k in range(p, 0, -1):
        stages.append(list(range(start[k][j], j)))
        j = start[k][j]
    return stages[::-1]
    ### END SOLUTION
