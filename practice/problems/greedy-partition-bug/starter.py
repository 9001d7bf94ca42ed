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
    raise NotImplementedError  # TODO: your code here


def slow_step_case():
    """(layer_times, p): seed_partition fills all p stages, yet 1F1B with 2p micro-batches (F = B = W = a stage's
    time) takes at least 1.25 times as long with its cut as with the exact min-max cut."""
    raise NotImplementedError  # TODO: your code here


def fixed_partition(layer_times, p, comm=0.0):
    """Cut the layers into exactly p non-empty contiguous stages with the smallest bottleneck.

    A stage costs the sum of its layers plus the communication of the cuts at its two ends: cutting between layer
    i and i + 1 costs comm[i] to both stages beside the cut (comm may also be one number for every cut).  Returns
    the stages as lists of layer indices, in order.  Raises ValueError unless p is an int in 1..len(layer_times),
    every layer time is a non-negative number, and comm is a non-negative number or one per cut.
    """
    raise NotImplementedError  # TODO: your code here
