"""Exercise building-block-memory (chapter 5): every rank's exact steady-state peak from a building block."""

import math


def steady_peaks(block, period, placement, act, w_mem=1.0):
    """Per rank, the most activation bytes it holds at any instant once ``block`` repeats every ``period`` slots.

    ``block[(kind, stage)]`` is the slot of micro-batch 0's op (kind "F", "B" or "W"); micro-batch i runs it at
    slot + i * period, and every op lasts one slot.  ``placement[r]`` lists the stages rank r holds, ``act[s]`` the
    bytes one micro-batch keeps on stage s.  F allocates act[s] when its slot starts; B frees (1 - w_mem) * act[s]
    and W the remaining w_mem * act[s] when their slots end.  Raises ValueError for inputs outside that model.
    """
    raise NotImplementedError  # TODO: your code here
