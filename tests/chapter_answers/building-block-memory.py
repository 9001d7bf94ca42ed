"""Chapter 5's lifespan rule pasted as an answer: cell memory-knob (peak ≈ ⌈l/T⌉, l from F's start to W's end) and the
upper end of cell v-bracket ((⌈l_0/T⌉ + ⌈l_1/T⌉)/2, one ceiling per stage a rank holds), in bytes."""

import math


def steady_peaks(block, period, placement, act, w_mem=1.0):
    if type(period) is not int or period < 1 or not 0 <= w_mem <= 1:
        raise ValueError("bad period or w_mem")
    return [sum(act[s] * math.ceil((block["W", s] + 1 - block["F", s]) / period) for s in held) for held in placement]
