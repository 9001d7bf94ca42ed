"""Exercise bubble-ratio (chapter 1): the bubble ratio of a synchronous pipeline schedule."""


def bubble_ratio(p, m, v=1):
    """The share of time a rank idles in GPipe/1F1B with p stages, m micro-batches and v chunks per rank.

    Returns (p - 1) / (v * m + p - 1) as a float.  Raises ValueError when p, m or v is not a positive int
    (bool does not count as an int).
    """
    raise NotImplementedError  # TODO: your code here
