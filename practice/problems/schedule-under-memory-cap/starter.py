"""Exercise schedule-under-memory-cap (chapter 5): a greedy scheduler that keeps every rank under a memory cap."""

import heapq
import itertools
import math

from course.costs import Costs
from course.plan import Plan
from course.sim import simulate


def schedule_under_cap(p, m, f, b, w, cap, w_mem=1.0):
    """Per rank, an order of "F i", "B i", "W i" tokens (split backward, rank r runs stage r) that never holds more
    than ``cap`` micro-batch activations on any rank (F allocates 1, B frees 1 - w_mem, W frees w_mem) and
    keeps one iteration short.  Raises ValueError for bad arguments or a cap below one activation.
    """
    raise NotImplementedError  # TODO: your code here
