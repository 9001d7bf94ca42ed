"""Exercise optimal-partition (chapter 7): cut uneven layers into p contiguous stages with the smallest bottleneck."""


def partition(costs, p):
    """Cut the layers (costs[i] = time of layer i) into p non-empty contiguous stages.

    Returns the number of layers of each stage (p positive ints summing to len(costs)) such that the slowest
    stage is as fast as possible.  Raises ValueError unless p is a positive int <= len(costs) and every cost is a
    non-negative number.
    """
    raise NotImplementedError  # TODO: your code here
