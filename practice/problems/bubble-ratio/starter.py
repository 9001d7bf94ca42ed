"""Exercise bubble-ratio (chapter 1): the bubble measured on a timeline, then its closed form."""

import math


def bubble_from_spans(spans):
    """1 - busy / (p x makespan) for per-rank lists of (start, end) busy intervals; 0.0 when nothing ran.

    One rank's intervals may overlap (two streams at once): a moment counts as busy once.
    Raises ValueError for an interval that is not two finite non-negative numbers with start <= end.
    """
    raise NotImplementedError  # TODO: your code here


def bubble_ratio(p, m, v=1):
    """The bubble ratio of GPipe/1F1B (v=1) or interleaved 1F1B (v chunks per rank), uniform stages, no latency.

    Raises ValueError when p, m or v is not a positive int (bool does not count as an int).
    """
    raise NotImplementedError  # TODO: your code here
