"""Exercise building-block-memory (chapter 5): every rank's exact steady-state peak from a building block."""

import math


def steady_peaks(block, period, placement, act, w_mem=1.0):
    """Per rank, the most activation bytes it holds at any instant once ``block`` repeats every ``period`` slots.

    ``block[(kind, stage)]`` is the slot of micro-batch 0's op (kind "F", "B" or "W"); micro-batch i runs it at
    slot + i * period, and every op lasts one slot.  ``placement[r]`` lists the stages rank r holds, ``act[s]`` the
    bytes one micro-batch keeps on stage s.  F allocates act[s] when its slot starts; B frees (1 - w_mem) * act[s]
    and W the remaining w_mem * act[s] when their slots end.  Raises ValueError for inputs outside that model.
    """
    ### BEGIN SOLUTION
    if type(period) is not int or period < 1:
        raise ValueError(f"period must be a positive int (slots), got {period!r}")
    if type(w_mem) not in (int, float) or not 0 <= w_mem <= 1:
        raise ValueError(f"w_mem must be a number in [0, 1], got {w_mem!r}")
    stages = sorted(s for held in placement for s in held)
    if stages != list(range(len(stages))) or len(act) != len(stages):
        raise ValueError("placement must hold each stage 0..S-1 exactly once and act give one size per stage")
    for s in stages:
        for kind in "FBW":
            if type(block.get((kind, s))) is not int:
                raise ValueError(f"block has no integer slot for ({kind!r}, {s})")
        if type(act[s]) not in (int, float) or not math.isfinite(act[s]) or act[s] < 0:
            raise ValueError(f"act[{s}] must be a finite non-negative number, got {act[s]!r}")

    def alive(t, start, end):
        """Copies i (any integer) with start + i*period <= t < end + i*period: started, not yet freed."""
        return (t - start) // period - (t - end) // period

    peaks = []
    for held in placement:
        levels = []
        for t in range(period):          # the level repeats with the period: one period shows every phase
            level = 0.0
            for s in held:
                f, b, w = block["F", s], block["B", s], block["W", s]
                # the part freed by B lives from F's start to B's end, the part W needs until W's end
                level += act[s] * ((1 - w_mem) * alive(t, f, b + 1) + w_mem * alive(t, f, w + 1))
            levels.append(level)
        peaks.append(max(levels, default=0.0))
    return peaks
    ### END SOLUTION
