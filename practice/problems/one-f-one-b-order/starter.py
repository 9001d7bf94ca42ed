"""Exercise one-f-one-b-order (chapter 2): the shortest 1F1B warm-up per stage when transfers have latency."""

import math

from course.costs import Costs
from course.plan import Op, Plan
from course.sim import DeadlockError, simulate


def one_f_one_b_orders(p, m, f, b, comm=0.0):
    """Each stage's ops, e.g. [["F0", "F1", "B0", ...], ...]: warm-up forwards, then one forward one backward, then
    the remaining backwards, with per stage the fewest forwards before the first backward that neither deadlock
    nor make the makespan longer than GPipe's (forward f, full backward b on every stage, latency comm).

    Raises ValueError unless p, m are positive ints, f, b finite positive numbers and comm a finite number >= 0.
    """
    raise NotImplementedError  # TODO: your code here
