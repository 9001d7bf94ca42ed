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
    ### BEGIN SOLUTION
    for name, value in (("p", p), ("m", m)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    for name, value, low in (("f", f, 0.0), ("b", b, 0.0), ("comm", comm, None)):
        if type(value) not in (int, float) or not math.isfinite(value) or \
                (value <= 0 if low is not None else value < 0):
            raise ValueError(f"{name} must be a finite {'positive' if low is not None else 'non-negative'} number, "
                             f"got {value!r}")
    costs = Costs(f=f, b=b, w=0.0, comm=comm)

    def order(lead):
        """`lead` forwards, then B0, then one forward one backward, then the remaining backwards."""
        ops = [f"F{i}" for i in range(lead)] + ["B0"]
        for i in range(1, m):
            ops += ([f"F{lead + i - 1}"] if lead + i - 1 < m else []) + [f"B{i}"]
        return ops

    def makespan(leads):
        plan = Plan([[Op(t[0], int(t[1:]), s) for t in order(leads[s])] for s in range(p)], m)
        try:
            return simulate(plan, costs).makespan
        except DeadlockError:
            return math.inf

    # Start from GPipe (every forward first) and take one warm-up forward away wherever that keeps the makespan
    # within GPipe's, until no stage can lose one more: a shorter warm-up on any stage then deadlocks or is slower.
    leads = [m] * p
    target = makespan(leads) * (1 + 1e-9)
    shrunk = True
    while shrunk:
        shrunk = False
        for s in reversed(range(p)):
            while leads[s] > 1:
                trial = leads[:s] + [leads[s] - 1] + leads[s + 1:]
                if makespan(trial) > target:
                    break
                leads, shrunk = trial, True
    return [order(lead) for lead in leads]
    ### END SOLUTION
