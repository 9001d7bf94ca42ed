"""The exact method: CP-SAT (OR-Tools) proves a plan optimal, or returns the best plan and the solver's bound."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction

from ..costs import memory_change
from ..optional import importable
from ..plan import Op
from ..sim_compiled import CompiledPlan
from ..validation import check_counts, check_positive_number
from .heuristic import heuristic
from .problem import EPS, Problem, SearchResult, evaluate, lower_bound

EXACT_AVAILABLE = importable("ortools")
NO_EXACT = ("the exact method needs OR-Tools (ortools), which this Python lacks (the browser edition never has it): "
            "showing the heuristic's plan and its proven lower bound")


class ExactUnavailable(ImportError):
    """``exact`` without OR-Tools."""


EXACT_MAX_OPS_WITHOUT_LIMIT = 48        # p x m above which --exact needs an explicit time limit
DEFAULT_WORKERS = 2                     # CP-SAT workers: the CI machines have 2 cores


def _integer_scale(values: Sequence[float], limit: int = 1000) -> tuple[int, bool]:
    """The smallest q <= limit with every value x q an integer (True), else (limit, False): rounded."""
    fracs = [Fraction(v).limit_denominator(limit) for v in values]
    if all(abs(float(fr) - v) <= EPS * max(1.0, abs(v)) for fr, v in zip(fracs, values)):
        q = 1
        for fr in fracs:
            q = q * fr.denominator // math.gcd(q, fr.denominator)
        if q <= limit:
            return q, True
    return limit, False


def exact(problem: Problem, time_limit: float | None = None, workers: int = DEFAULT_WORKERS,
          warm_start: SearchResult | None = None, seed: int = 0) -> SearchResult:
    """CP-SAT: intervals, no-overlap per rank, a reservoir per rank for memory, hinted with the heuristic's plan.

    Returns the optimum when the solver proves it within ``time_limit`` seconds, else the best plan found (never
    worse than the heuristic's) and the solver's bound.  Durations are scaled to integers; costs that need more
    than 1/1000 resolution are rounded, and then optimality is only claimed if the simulated makespan meets the
    bound proven on the real costs."""
    if not EXACT_AVAILABLE:
        raise ExactUnavailable(NO_EXACT)
    from ortools.sat.python import cp_model

    p, m = problem.p, problem.m
    if time_limit is None and p * m > EXACT_MAX_OPS_WITHOUT_LIMIT:
        raise ValueError(f"p x m = {p * m} is too large for the exact method without a time limit "
                         f"(at most {EXACT_MAX_OPS_WITHOUT_LIMIT}): give --time-limit SECONDS")
    if time_limit is not None:
        check_positive_number("time limit", time_limit, "seconds")
    check_counts(workers=workers)
    t0 = time.perf_counter()
    warm = warm_start or heuristic(problem)
    q, exact_costs = _integer_scale(problem.f + problem.b + problem.w + (problem.comm,))
    qm, exact_mem = _integer_scale((problem.w_mem,))
    reach = q * (m * (sum(problem.f) + sum(problem.b) + sum(problem.w)) + 2 * m * p * problem.comm)
    if reach >= 2 ** 62:                                   # the longest any plan can take, in integer time
        raise ValueError(f"costs too large for the exact method: times scaled by {q} reach {reach:.3g}, beyond "
                         "CP-SAT's 64-bit integers (2^62); scale the costs down")
    dur = {k: [round(x * q) for x in vals] for k, vals in (("F", problem.f), ("B", problem.b), ("W", problem.w))}
    c = round(problem.comm * q)
    horizon = round(warm.makespan * q) if exact_costs else sum(round(x * q) for x in problem.work) * 4
    horizon = max(horizon, 1)

    model = cp_model.CpModel()
    start, end = {}, {}
    per_rank = [[] for _ in range(p)]
    for s in range(p):
        for k in "FBW":
            for i in range(m):
                d = dur[k][s]
                st = model.NewIntVar(0, horizon, f"{k}{i}s{s}")
                iv = model.NewFixedSizeIntervalVar(st, d, f"i{k}{i}s{s}")
                start[k, i, s], end[k, i, s] = st, st + d
                per_rank[s].append(iv)
    makespan = model.NewIntVar(0, horizon, "makespan")
    for s in range(p):
        model.AddNoOverlap(per_rank[s])
        for i in range(m):
            if s > 0:
                model.Add(start["F", i, s] >= end["F", i, s - 1] + c)
            model.Add(start["B", i, s] >= end["F", i, s])
            if s + 1 < p:
                model.Add(start["B", i, s] >= end["B", i, s + 1] + c)
            model.Add(start["W", i, s] >= end["B", i, s])
            model.Add(makespan >= end["W", i, s])
            if i > 0:                                      # each kind in micro-batch order (module doc)
                for k in "FBW":
                    model.Add(start[k, i, s] >= end[k, i - 1, s])
        # Memory (memory_change, scaled by qm): F allocates at its start, B and W free at their ends.
        b_free = round(-memory_change("B", problem.w_mem) * qm)
        times, changes = [], []
        for i in range(m):
            times += [start["F", i, s], end["B", i, s], end["W", i, s]]
            changes += [qm, -b_free, -(qm - b_free)]
        model.AddReservoirConstraint(times, changes, 0, math.floor(problem.cap[s] * qm + EPS))
    bound = lower_bound(problem)
    if exact_costs:                                        # the proven bound, in the solver's integer time
        model.Add(makespan >= math.ceil(bound * q - EPS))
    model.Minimize(makespan)
    if exact_costs:                                        # warm start: the heuristic's simulated start times
        tl = _timeline_of(warm)
        for s in range(p):
            for op, st in zip(warm.plan.ranks[s], tl.starts[s]):
                model.AddHint(start[op.kind, op.mb, s], round(st * q))
        model.AddHint(makespan, round(warm.makespan * q))

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    status = solver.Solve(model)
    status_name = solver.StatusName(status)
    details = {"solver_status": status_name, "workers": workers, "time_scale": q,
               "heuristic_makespan": warm.makespan}
    result_plan, result_tl = warm.plan, None
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        orders = []
        for s in range(p):
            ops = [Op(k, i, s) for k in "FBW" for i in range(m)]
            ops.sort(key=lambda op: (solver.Value(start[op.kind, op.mb, s]), "FBW".index(op.kind), op.mb))
            orders.append(ops)
        plan, tl = evaluate(problem, orders)
        if tl.makespan < warm.makespan - EPS:
            result_plan, result_tl = plan, tl
    if result_tl is None:
        result_tl = _timeline_of(warm)
    lb = bound
    if exact_costs and exact_mem and status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN):
        solver_bound = solver.ObjectiveValue() if status == cp_model.OPTIMAL else solver.BestObjectiveBound()
        if math.isfinite(solver_bound):   # a proven bound even when no solution was found in time
            lb = max(lb, solver_bound / q)
    ms = result_tl.makespan
    lb = min(lb, ms)                      # ms is a real plan: a bound above it would only be rounding
    optimal = ms <= lb + EPS
    return SearchResult(result_plan, ms, lb, optimal, time.perf_counter() - t0, list(result_tl.peak_activations),
                        "exact", problem, details)


def _timeline_of(result: SearchResult):
    return CompiledPlan(result.plan).simulate(result.problem.costs)
