"""Chapter 2's printed code as an answer to event-simulator.

02_simulator's cell `event-sim` gives the rule in four steps and points to its code: `simulate` in `course/sim.py`
("that rule written down directly"), which the chapter then calls in every cell.  Pasted as a learner would, it is
an adapter from this exercise's lists to a course Plan and Costs around `course.sim.simulate`.
"""
from course.costs import Costs
from course.plan import Op, Plan
from course.sim import DeadlockError, simulate as course_simulate


class Deadlock(RuntimeError):
    pass


def simulate(ranks, f, b, comm=0.0):
    m = 1 + max(int(t[1:]) for order in ranks for t in order)
    plan = Plan([[Op(t[0], int(t[1:]), s) for t in order] for s, order in enumerate(ranks)], m)
    try:
        tl = course_simulate(plan, Costs(f=list(f), b=list(b), w=0.0, comm=comm))
    except DeadlockError as err:
        raise Deadlock(str(err)) from None
    return [[(float(s), float(e)) for s, e in zip(tl.starts[r], tl.ends[r])] for r in range(len(ranks))]
