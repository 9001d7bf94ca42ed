"""The search problem and what every method shares: the inputs (``Problem``), the answer (``SearchResult``), the
memory rule, how per-rank orders become a plan and are timed, and the lower bound proven from the costs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..costs import Costs, memory_change
from ..plan import Op, Plan, PlanError
from ..sim_compiled import CompiledPlan
from ..validation import check_counts, is_number

EPS = 1e-9


@dataclass(frozen=True)
class Problem:
    """One search problem: p ranks (one stage each), m micro-batches, per-stage f, b, w, comm, cap, w_mem."""

    p: int
    m: int
    f: tuple[float, ...]
    b: tuple[float, ...]
    w: tuple[float, ...]
    comm: float
    cap: tuple[float, ...]
    w_mem: float

    @classmethod
    def make(cls, p: int, m: int, costs: Costs | None = None,
             max_activations: float | Sequence[float] | None = None) -> Problem:
        """Check the inputs and fix per-stage values.  ``max_activations``: one cap for every rank or one per rank
        (None: no cap, i.e. m)."""
        check_counts(p=p, m=m)
        costs = costs or Costs()
        if costs.mb_scale is not None:
            raise ValueError("search assumes identical micro-batches: mb_scale is not supported")
        f, b, w = (tuple(float(x) for x in costs.per_chunk(n, p, p)) for n in ("f", "b", "w"))
        if not math.isfinite(m * (sum(f) + sum(b) + sum(w)) + 2 * m * p * costs.comm):
            raise ValueError("costs too large: one step's work (m x every F, B, W, plus 2mp latencies) overflows a "
                             "float; give costs whose total is finite")
        if max_activations is None:
            cap = (float(m),) * p
        else:
            if is_number(max_activations):
                cap = (max_activations,) * p
            elif isinstance(max_activations, (list, tuple)):
                cap = tuple(max_activations)
            else:
                raise ValueError(f"max_activations must be a number >= 1 or a list of p={p} of them, "
                                 f"got {max_activations!r}")
            if len(cap) != p:
                raise ValueError(f"max_activations lists {len(cap)} caps but p={p}: give one cap or one per rank")
            for c in cap:
                if not is_number(c):
                    raise ValueError(f"max_activations must be finite numbers, got {max_activations!r}")
            if min(cap) < 1 - EPS:
                raise ValueError(f"max_activations {min(cap):g} is below one micro-batch's activations: no plan "
                                 "fits (allowed: >= 1, in micro-batch activations of the rank's stage)")
        return cls(p, m, f, b, w, float(costs.comm), tuple(float(c) for c in cap), float(costs.w_mem))

    @property
    def costs(self) -> Costs:
        """The course cost model for this problem (activations in units of one micro-batch per stage)."""
        return Costs(f=list(self.f), b=list(self.b), w=list(self.w), comm=self.comm, w_mem=self.w_mem)

    @property
    def work(self) -> list[float]:
        return [self.m * (f + b + w) for f, b, w in zip(self.f, self.b, self.w)]


@dataclass
class SearchResult:
    """The answer of both methods: a plan, its simulated makespan, a proven lower bound, and how it was found."""

    plan: Plan
    makespan: float
    lower_bound: float
    optimal: bool
    seconds: float
    peak_activations: list[float]
    method: str                                  # "heuristic" or "exact"
    problem: Problem
    details: dict = field(default_factory=dict)  # variant, moves, solver status, ...

    @property
    def gap(self) -> float:
        """How far the makespan may be above optimal, as a share of the lower bound."""
        return self.makespan / self.lower_bound - 1 if self.lower_bound > 0 else 0.0

    def to_json(self) -> dict:
        return {"method": self.method, "p": self.problem.p, "m": self.problem.m, "makespan": self.makespan,
                "lower_bound": self.lower_bound, "optimal": self.optimal, "gap": self.gap,
                "seconds": self.seconds, "peak_activations": self.peak_activations,
                "max_activations": list(self.problem.cap), "plan": self.plan.format().splitlines(),
                "details": self.details}


# ---- evaluation ---------------------------------------------------------------------------------------------

def make_plan(orders: Sequence[Sequence[Op]], m: int, name: str = "search") -> Plan:
    """The one place a search result becomes a Plan (one stage per rank).  Orders may hold plain
    (kind, mb, stage) tuples: the search makes millions of them, and Op is a tuple with names."""
    return Plan([[x if type(x) is Op else Op(*x) for x in o] for o in orders], m, name=name)


# ---- memory: the search counts activations through course.costs.memory_change, the Timeline's own rule -------

def peak_levels(order: Sequence[Op], w_mem: float) -> float:
    """The highest memory level a rank reaches running ``order`` (the order decides it, see the module doc)."""
    change = {kind: memory_change(kind, w_mem) for kind in "FBW"}
    level = peak = 0.0
    for op in order:
        level += change[op[0]]
        peak = max(peak, level)
    return peak


def evaluate(problem: Problem, orders: Sequence[Sequence[Op]], name: str = "search"):
    """Simulate per-rank orders with the course simulator: (plan, timeline)."""
    plan = make_plan(orders, problem.m, name)
    return plan, CompiledPlan(plan).simulate(problem.costs)


def asap_makespan(problem: Problem, orders: Sequence[Sequence[Op]]) -> float:
    """The makespan of per-rank orders when every op starts as soon as its rank is free and its input is there:
    the simulator's rule (see asap_ends).  Cheap enough to screen candidates; inf when the orders deadlock."""
    return max(asap_ends(problem, orders), default=0.0)


def asap_ends(problem: Problem, orders: Sequence[Sequence[Op]]) -> list[float]:
    """When each rank finishes under the as-soon-as-possible rule (all inf when the orders deadlock or make no
    valid plan).  The compiled simulator times them: the dependency and event rules are the simulators' own."""
    try:
        _, timeline = evaluate(problem, orders)
    except PlanError:                # a deadlock (a DeadlockError is a PlanError) or orders that are no plan
        return [math.inf] * problem.p
    return [ends[-1] if ends else 0.0 for ends in timeline.ends]


def within_cap(problem: Problem, orders: Sequence[Sequence[Op]]) -> bool:
    return all(peak_levels(o, problem.w_mem) <= c + EPS for o, c in zip(orders, problem.cap))


# ---- lower bound --------------------------------------------------------------------------------------------

def lower_bound(problem: Problem) -> float:
    """A makespan no plan can beat, proven per rank s from three facts:

    1. no op of rank s starts before its first input can arrive, a_s = sum_{j<s} (F_j + comm), and the rank
       then runs all its work, m (F_s + B_s + W_s);
    2. rank s's last forward ends no earlier than a_s + m F_s; that micro-batch must then go forward to the
       last rank and backward to s, and rank s still runs its B and W;
    3. no B of rank s starts before the first micro-batch's round trip reaches it back; until then rank s has
       freed nothing, so it ran at most floor(cap_s) forwards: the remaining forwards and all B's and W's follow.
    """
    p, m, f, b, w, c = problem.p, problem.m, problem.f, problem.b, problem.w, problem.comm
    best = 0.0
    for s in range(p):
        a = sum(f[:s]) + s * c
        down = sum(f[s + 1:]) + sum(b[s + 1:]) + 2 * (p - 1 - s) * c
        first_b = sum(f) + sum(b[s + 1:]) + (2 * p - 2 - s) * c
        early_f = min(m, math.floor(problem.cap[s] + EPS))
        best = max(best,
                   a + m * (f[s] + b[s] + w[s]),
                   a + m * f[s] + down + b[s] + w[s],
                   first_b + m * (b[s] + w[s]) + (m - early_f) * f[s])
    return best
