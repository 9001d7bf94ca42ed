"""Chapter 1's printed code as an answer to bubble-ratio.

Transcribes 01_bubble: the definition of the bubble the chapter prints in `one-batch` / `gpipe-bubble`
(idle / (p x makespan), busy time as the sum of the operations' durations, as `Timeline.busy` sums them) and
`bubble_formula(p, m)` from the code cell after `formula-checked`, the chapter's (p-1)/(m+p-1).
"""


def bubble_from_spans(spans):
    import math
    busy, first, last = 0.0, math.inf, -math.inf
    for rank in spans:
        for start, end in rank:
            for x in (start, end):
                if type(x) not in (int, float) or not math.isfinite(x) or x < 0:
                    raise ValueError(f"bad time {x!r}")
            if end < start:
                raise ValueError("interval ends before it starts")
            busy += end - start
            first, last = min(first, start), max(last, end)
    area = len(spans) * (last - first) if last > first else 0.0
    return 1.0 - busy / area if area > 0 else 0.0


def bubble_ratio(p, m, v=1):
    for value in (p, m, v):
        if type(value) is not int or value < 1:
            raise ValueError("p, m and v must be positive ints")
    return (p - 1) / (m + p - 1)
