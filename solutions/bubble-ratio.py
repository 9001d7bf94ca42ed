"""Exercise bubble-ratio (chapter 1): the bubble measured on a timeline, then its closed form."""

import math


def bubble_from_spans(spans):
    """1 - busy / (p x makespan) for per-rank lists of (start, end) busy intervals; 0.0 when nothing ran.

    One rank's intervals may overlap (two streams at once): a moment counts as busy once.
    Raises ValueError for an interval that is not two finite non-negative numbers with start <= end.
    """
    ### BEGIN SOLUTION
    busy, first, last = 0.0, math.inf, -math.inf
    for r, rank in enumerate(spans):
        intervals = []
        for start, end in rank:
            for x in (start, end):
                if type(x) not in (int, float) or not math.isfinite(x) or x < 0:
                    raise ValueError(f"rank {r}: times must be finite non-negative numbers, got {x!r}")
            if end < start:
                raise ValueError(f"rank {r}: interval ({start}, {end}) ends before it starts")
            intervals.append((start, end))
            first, last = min(first, start), max(last, end)
        covered = -math.inf             # the union of the rank's intervals, swept from left to right
        for start, end in sorted(intervals):
            if end > covered:
                busy += end - max(start, covered)
                covered = end
    area = len(spans) * (last - first) if last > first else 0.0
    return 1.0 - busy / area if area > 0 else 0.0
    ### END SOLUTION


def bubble_ratio(p, m, v=1):
    """The bubble ratio of GPipe/1F1B (v=1) or interleaved 1F1B (v chunks per rank), uniform stages, no latency.

    Raises ValueError when p, m or v is not a positive int (bool does not count as an int).
    """
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m), ("v", v)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    # Each rank idles (p-1)/v ops' worth of time out of v*m + (p-1) such slots (in units of one chunk's F+B).
    return (p - 1) / (v * m + p - 1)
    ### END SOLUTION
