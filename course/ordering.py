"""Micro-batch ordering: in which order should uneven micro-batches enter the pipeline?

Micro-batch i costs ``scales[i]`` times the base costs (longer sequences cost more).  A schedule fixes the
*positions* (the first micro-batch to enter, the second, ...); an order says which micro-batch takes each
position.  Every order is evaluated by simulation (:class:`course.sim_compiled.CompiledPlan`: the plan is
compiled once, then simulated under each order's costs).

Policies:

- ``fifo``            arrival order 0, 1, ..., m-1;
- ``heaviest-first``  the seed blog post's proposal: largest scale first;
- ``lightest-first``  the opposite (shortest job first);
- ``johnson``         Johnson's rule (1954) for two ranks: optimal for a forward-only two-stage flow;
- ``best``            exhaustive search (branch and bound: prunes only what provably cannot win), m <= 9.

Schedules: any name of :data:`course.schedules.REGISTRY` (e.g. ``1f1b``, ``gpipe``) or ``forward``, the
forward pass alone (inference, a flow shop): GPipe's plan with zero backward cost.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from .costs import Costs
from .plan import Op, Overlap, Plan, ops_of
from .schedules import REGISTRY, build
from .sim import simulate
from .sim_compiled import CompiledPlan
from .timeline import Timeline
from .validation import is_number

POLICIES = ("fifo", "heaviest-first", "lightest-first", "johnson", "best")
FORWARD = "forward"
MAX_BEST_M = 9


@dataclass(frozen=True)
class Ordering:
    order: list[int]          # order[k] = the micro-batch that takes position k
    makespan: float           # the job completion time of the whole batch
    mean_completion: float    # mean over micro-batches of when each is done (its last op; forward: last F)
    policy: str
    schedule: str

    def to_json(self) -> dict:
        return {"policy": self.policy, "schedule": self.schedule, "order": self.order,
                "makespan": self.makespan, "mean_completion": self.mean_completion}


def order_microbatches(scales: Sequence[float], p: int, policy: str = "fifo", schedule: str = "1f1b",
                       costs: Costs | None = None) -> Ordering:
    """Order micro-batches with per-micro-batch cost multipliers ``scales`` by ``policy``; evaluate by simulation."""
    job = _Job(scales, p, schedule, costs)
    if policy in _SIMPLE:
        order = _simple_order(policy, job.scales)
    elif policy == "johnson":
        order = job.johnson()
    elif policy == "best":
        order = job.best()
    else:
        raise ValueError(f"unknown policy {policy!r}; allowed: {', '.join(POLICIES)}")
    return job.result(order, policy)


def evaluate(order: Sequence[int], scales: Sequence[float], p: int, schedule: str = "1f1b",
             costs: Costs | None = None) -> Ordering:
    """Makespan and mean completion of a given ``order``."""
    job = _Job(scales, p, schedule, costs)
    return job.result(job.check_order(order), "given")


def ordered_timeline(order: Sequence[int], scales: Sequence[float], p: int, schedule: str = "1f1b",
                     costs: Costs | None = None) -> Timeline:
    """The simulated timeline with micro-batches relabelled by ``order`` (op ``F3`` is micro-batch 3)."""
    job = _Job(scales, p, schedule, costs)
    plan = reorder(job.plan, job.check_order(order))
    return simulate(plan, replace(job.costs, mb_scale=job.scales))


def reorder(plan: Plan, order: Sequence[int]) -> Plan:
    """The plan in which position k runs micro-batch ``order[k]`` (ops and routes relabelled)."""
    def relabel(step):
        if isinstance(step, Overlap):
            return Overlap(relabel(step.first), relabel(step.second))
        return Op(step.kind, order[step.mb], step.stage)
    routes = [None] * plan.m
    for k, route in enumerate(plan.routes):
        routes[order[k]] = route
    return Plan([[relabel(s) for s in steps] for steps in plan.ranks], plan.m, plan.placement, routes, plan.name)


_SIMPLE = ("fifo", "heaviest-first", "lightest-first")


def _simple_order(policy: str, scales: Sequence[float]) -> list[int]:
    """The orders that only sort: arrival order, largest scale first, smallest scale first (ties: arrival)."""
    if policy == "fifo":
        return list(range(len(scales)))
    sign = -1 if policy == "heaviest-first" else 1
    return sorted(range(len(scales)), key=lambda i: sign * scales[i])


def schedule_names() -> list[str]:
    return [FORWARD, *REGISTRY]


@lru_cache(maxsize=32)
def _compiled(schedule: str, p: int, m: int) -> CompiledPlan:
    """The schedule's plan, compiled once: every order of every batch of this shape simulates it."""
    return CompiledPlan(build(schedule, p, m))


class _Job:
    """One ordering problem: the schedule's plan (positions), its costs, the micro-batch scales."""

    def __init__(self, scales, p, schedule, costs):
        scales = list(scales)
        if not scales:
            raise ValueError("costs is empty: give one cost multiplier per micro-batch, e.g. 1,3,2")
        if any(not is_number(s) or s < 0 for s in scales):
            raise ValueError(f"micro-batch costs must be finite non-negative numbers, got {scales}")
        costs = costs or Costs()
        if costs.mb_scale is not None:
            raise ValueError("give per-micro-batch costs as scales, not as costs.mb_scale")
        if schedule == FORWARD:
            self.compiled = _compiled("gpipe", p, len(scales))
            costs = replace(costs, b=0.0, w=0.0)   # forward pass only: the backward ops take no time
        elif schedule in REGISTRY:
            self.compiled = _compiled(schedule, p, len(scales))
        else:
            raise ValueError(f"unknown schedule {schedule!r}; allowed: {', '.join(schedule_names())}")
        self.plan = self.compiled.plan
        self.scales = [float(s) for s in scales]
        self.costs, self.schedule, self.m, self.p = costs, schedule, len(scales), p

    def check_order(self, order) -> list[int]:
        order = list(order)
        if sorted(order) != list(range(self.m)):
            raise ValueError(f"order must be a permutation of 0..{self.m - 1}, got {order}")
        return order

    def timeline(self, order: Sequence[int]) -> Timeline:
        """Simulate the unrelabelled plan with position k costing scales[order[k]] (same makespan, no rebuild)."""
        return self.compiled.simulate(replace(self.costs, mb_scale=[self.scales[i] for i in order]))

    def makespan(self, order: Sequence[int]) -> float:
        return self.timeline(order).makespan

    def result(self, order: list[int], policy: str) -> Ordering:
        tl = self.timeline(order)
        counted = ("F",) if self.schedule == FORWARD else ("F", "B", "W")   # forward-only: done after its last F
        done = [0.0] * self.m
        for spans in tl.spans:
            for sp in spans:
                for op in ops_of(sp.step):
                    if op.kind in counted:
                        done[op.mb] = max(done[op.mb], sp.end - tl.start)
        return Ordering(order, tl.makespan, sum(done) / self.m, policy, self.schedule)

    def johnson(self) -> list[int]:
        """Johnson's rule on each micro-batch's work on rank 0 (a) and rank 1 (b): first the jobs with a <= b by
        increasing a, then the others by decreasing b.  Minimises the makespan of a two-machine flow shop."""
        if self.p != 2:
            raise ValueError(f"johnson's rule needs exactly 2 ranks (p=2), got p={self.p}; use best or a heuristic")
        work = [sum(row) / self.m for row in self.costs.durations(self.plan)]   # one micro-batch's, per rank
        a = [s * work[0] for s in self.scales]
        b = [s * work[1] for s in self.scales]
        first = sorted((i for i in range(self.m) if a[i] <= b[i]), key=lambda i: a[i])
        last = sorted((i for i in range(self.m) if a[i] > b[i]), key=lambda i: -b[i])
        return first + last

    def best(self) -> list[int]:
        """The order with the smallest makespan.

        Branch and bound over positions, pruning only prefixes that provably cannot beat the best order found.
        The bound: makespan never decreases when a duration grows (every start time is a max of sums), so
        simulating a prefix with every open position at the smallest unplaced scale bounds all its completions
        from below.  Cost: one simulation per node; m = 9 can take minutes when many orders tie.
        """
        if self.m > MAX_BEST_M:
            raise ValueError(f"best is an exhaustive search: m={self.m} is too many micro-batches "
                             f"(at most {MAX_BEST_M}); use heaviest-first, lightest-first or fifo")
        incumbent = min((_simple_order(pol, self.scales) for pol in _SIMPLE), key=self.makespan)
        bound = self.makespan(incumbent)
        scales = self.scales

        def search(prefix: list[int], rest: list[int]) -> None:
            nonlocal incumbent, bound
            if not rest:
                incumbent, bound = list(prefix), self.makespan(prefix)
                return
            seen = set()
            for i in sorted(rest, key=lambda j: -scales[j]):
                if scales[i] in seen:            # equal scales: the same subtree
                    continue
                seen.add(scales[i])
                left = [j for j in rest if j != i]
                low = min((scales[j] for j in left), default=0.0)
                trial = [scales[j] for j in prefix] + [scales[i]] + [low] * len(left)
                if self.compiled.simulate(replace(self.costs, mb_scale=trial)).makespan < bound * (1 - 1e-12):
                    search(prefix + [i], left)

        search([], list(range(self.m)))
        return incumbent


# ---- the seed blog's claim: "heaviest micro-batch first cuts JCT by 15-30%" --------------------------------
def skewed_workloads(n: int, m: int, sigma: float, seed: int = 0) -> list[list[float]]:
    """``n`` batches of ``m`` micro-batch cost multipliers, log-normal with spread ``sigma`` (sequence lengths
    are heavy-tailed; sigma 0 makes every micro-batch equal), in random arrival order.  The standard library's
    generator, so the browser edition (no numpy) draws the very same workloads as the desktop one."""
    rng = random.Random(seed)
    return [[round(rng.lognormvariate(0.0, sigma), 4) for _ in range(m)] for _ in range(n)]


def order_effect(workloads: Sequence[Sequence[float]], p: int, schedule: str = "1f1b", costs: Costs | None = None,
                 policy: str = "heaviest-first", optimum: bool = False) -> dict[str, list[float]]:
    """For each workload, ``policy`` against arrival order: ``gain`` = (fifo - policy) / fifo makespan (positive:
    the policy is faster), ``mean_completion`` = relative change of the mean micro-batch completion time
    (positive: slower), and with ``optimum`` also ``gap`` = (policy - best) / best."""
    out: dict[str, list[float]] = {"gain": [], "mean_completion": []}
    if optimum:
        out["gap"] = []
    for scales in workloads:
        fifo = order_microbatches(scales, p, "fifo", schedule, costs)
        ordered = order_microbatches(scales, p, policy, schedule, costs)
        out["gain"].append((fifo.makespan - ordered.makespan) / fifo.makespan)
        out["mean_completion"].append((ordered.mean_completion - fifo.mean_completion) / fifo.mean_completion)
        if optimum:
            best = order_microbatches(scales, p, "best", schedule, costs)
            out["gap"].append((ordered.makespan - best.makespan) / best.makespan)
    return out


def heaviest_first_effect(workloads: Sequence[Sequence[float]], p: int, schedule: str = "1f1b",
                          costs: Costs | None = None, optimum: bool = False) -> dict[str, list[float]]:
    """:func:`order_effect` of the seed blog's heaviest-first (its control is ``policy="lightest-first"``)."""
    return order_effect(workloads, p, schedule, costs, "heaviest-first", optimum)


# Pipelines the study covers (p = 4; cost lists give one value per stage).
SCENARIOS = {
    "inference, balanced stages": (FORWARD, Costs()),
    "inference, last stage x2 (lm_head)": (FORWARD, Costs(f=[1, 1, 1, 2])),
    "inference, first stage x2": (FORWARD, Costs(f=[2, 1, 1, 1])),
    "training 1F1B, balanced": ("1f1b", Costs()),
    "training 1F1B, last stage x2": ("1f1b", Costs(f=[1, 1, 1, 2], b=[1, 1, 1, 2], w=[1, 1, 1, 2])),
}


__all__ = ["POLICIES", "FORWARD", "MAX_BEST_M", "Ordering", "order_microbatches", "evaluate", "ordered_timeline",
           "reorder", "schedule_names", "skewed_workloads", "order_effect", "heaviest_first_effect", "SCENARIOS"]
