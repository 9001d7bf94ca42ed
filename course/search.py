"""Schedule search under a memory cap: the best plan for given costs, and a proof of how good it is.

The problem.  p ranks, rank r holds stage r; m identical micro-batches; backward split into B (input gradient)
and W (weight gradient); per-stage durations F, B, W; ``comm`` between neighbouring ranks.  Memory is counted
as the simulator counts it (``Timeline.peak_activations``): F allocates one micro-batch's activations of its
stage, B frees ``1 - w_mem`` of them, W the remaining ``w_mem``.  A rank runs its ops one after another, so its
memory at any instant depends on its *order* only: the level when the k-th op starts is what the ops before it
allocated minus what they freed.  The cap ``max_activations`` bounds that level on every rank at every instant.
Goal: the order that minimises one iteration's makespan (first start to last end).

Two methods, one answer (``SearchResult``):

- ``heuristic``: list scheduling in the spirit of the Zero Bubble heuristic, run in several variants (how
  eagerly forwards fill memory, whether a forward may delay a backward that is about to arrive, when W's
  fill gaps), plus the hand-made ZB-H1 and ZB-H2 where they fit; candidates are ranked by their
  as-soon-as-possible makespan (the simulator's rule, computed cheaply here; tests check both agree) and the
  best is simulated by the course simulator; then local moves on the critical path (swap an op with the W or
  F in front of it, defer that W into the next gap, ...) are tried, and kept when the simulator confirms them
  shorter and the rank stays under the cap.  It comes with ``lower_bound``, a bound proven from the costs alone.
- ``exact``: CP-SAT (OR-Tools) with an interval per op, no-overlap per rank, a reservoir constraint per rank for
  memory, warm-started from the heuristic's plan (hints).  Proves optimality or returns the best plan found and
  the solver's bound.

Why each kind may run in micro-batch order on every rank (the exact model assumes it, so its proofs hold for
all plans): micro-batches are identical, so given any valid schedule, re-label on every rank the k-th F (B, W)
it runs as micro-batch k.  Its inputs arrive in time because, from rank 0 onward for F and from the last rank
back for B, the k-th earliest arrival is never later than the arrival the original labels used for the k-th
execution; memory counts ops, not labels.  Non-identical micro-batches (``mb_scale``) are not supported.
"""

from __future__ import annotations

import heapq
import math
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

from .costs import Costs
from .optional import importable
from .plan import Op, Plan
from .sim_compiled import CompiledPlan
from .validation import check_counts, check_positive_number, is_number

EXACT_AVAILABLE = importable("ortools")
NO_EXACT = ("the exact method needs OR-Tools (ortools), which this Python lacks (the browser edition never has it): "
            "showing the heuristic's plan and its proven lower bound")


class ExactUnavailable(ImportError):
    """``exact`` without OR-Tools."""

EPS = 1e-9
EXACT_MAX_OPS_WITHOUT_LIMIT = 48        # p x m above which --exact needs an explicit time limit
DEFAULT_WORKERS = 2                     # CP-SAT workers: the CI machines have 2 cores


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
             max_activations: float | Sequence[float] | None = None) -> "Problem":
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


def peak_levels(order: Sequence[Op], w_mem: float) -> float:
    """The highest memory level a rank reaches running ``order`` (the order decides it, see the module doc)."""
    level = peak = 0.0
    for op in order:
        if op[0] == "F":
            level += 1.0
            peak = max(peak, level)
        else:
            level -= (1.0 - w_mem) if op[0] == "B" else w_mem
    return peak


def evaluate(problem: Problem, orders: Sequence[Sequence[Op]], name: str = "search"):
    """Simulate per-rank orders with the course simulator: (plan, timeline)."""
    plan = make_plan(orders, problem.m, name)
    return plan, CompiledPlan(plan).simulate(problem.costs)


def asap_makespan(problem: Problem, orders: Sequence[Sequence[Op]]) -> float:
    """The makespan of per-rank orders when every op starts as soon as its rank is free and its input is there:
    the simulator's rule, written for one stage per rank (tests check both agree).  Cheap enough to screen
    candidates; inf when the orders deadlock."""
    return max(asap_ends(problem, orders), default=0.0)


def asap_ends(problem: Problem, orders: Sequence[Sequence[Op]]) -> list[float]:
    """When each rank finishes under the as-soon-as-possible rule (all inf when the orders deadlock)."""
    p, m, c = problem.p, problem.m, problem.comm
    dur = {"F": problem.f, "B": problem.b, "W": problem.w}
    inf = math.inf
    fend = [[inf] * m for _ in range(p)]
    bend = [[inf] * m for _ in range(p)]
    pos, free = [0] * p, [0.0] * p
    waiting: dict[tuple[str, int, int], int] = {}
    todo = list(range(p))
    while todo:
        r = todo.pop()
        order, k, t_free = orders[r], pos[r], free[r]
        while k < len(order):
            kind, i, _ = order[k]
            if kind == "F" and r > 0:
                ready = fend[r - 1][i]
                key = ("F", i, r - 1)
            elif kind == "B" and r + 1 < p:
                ready = bend[r + 1][i]
                key = ("B", i, r + 1)
            else:
                ready, key = -inf, None
            if ready == inf:
                waiting[key] = r
                break
            start = max(t_free, ready + c)
            t_free = start + dur[kind][r]
            if kind == "F":
                fend[r][i] = t_free
                nxt = waiting.pop(("F", i, r), None)
            elif kind == "B":
                bend[r][i] = t_free
                nxt = waiting.pop(("B", i, r), None)
            else:
                nxt = None
            if nxt is not None:
                todo.append(nxt)
            k += 1
        pos[r], free[r] = k, t_free
    if any(k < len(o) for k, o in zip(pos, orders)):
        return [inf] * p
    return free


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


# ---- the heuristic --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    """How one list-scheduling pass decides what a free rank runs next.

    lookahead   a forward may start only if it ends before the rank's next B can start (+ lookahead x F; when
                that B's input is not scheduled yet, its earliest possible arrival); None: forwards never wait
    fill        W's fill an idle gap only when they fit in it (True) or whenever nothing else is ready (False)
    warmup      forwards before the first B: None = as many as memory allows, k = at most k (p - r) - (k - 1)
                (1: 1F1B's p - r, 2: ZB-H2's 2(p - r) - 1), always within the cap
    """

    lookahead: float | None
    fill: bool
    warmup: int | None

    def __str__(self) -> str:
        look = "none" if self.lookahead is None else f"{self.lookahead:g}"
        return f"lookahead={look},fill={'fit' if self.fill else 'any'},warmup={self.warmup or 'cap'}"


VARIANTS = tuple(Variant(look, fill, warm) for warm in (None, 1) for look in (None, 0.0) for fill in (True, False))


def list_schedule(problem: Problem, variant: Variant) -> tuple[list[list[Op]], float]:
    """One list-scheduling pass: per-rank orders (each kind in micro-batch order) and their makespan.

    Ranks are visited in the order they become free.  A free rank runs, in this priority: a B whose inputs are
    there (it unblocks the rank before it and frees memory); a forward whose input is there, if memory allows
    and the variant's warm-up and lookahead let it; a W when memory blocks the next forward, or to fill a gap;
    otherwise it waits for the next input.
    """
    p, m, f, b, w, c, cap = problem.p, problem.m, problem.f, problem.b, problem.w, problem.comm, problem.cap
    b_free, w_free = 1.0 - problem.w_mem, problem.w_mem
    inf = math.inf
    nf, nb, nw = [0] * p, [0] * p, [0] * p
    level = [0.0] * p
    free = [0.0] * p
    fend = [[inf] * m for _ in range(p)]
    bend = [[inf] * m for _ in range(p)]
    orders: list[list[Op]] = [[] for _ in range(p)]
    k_warm = variant.warmup
    warm = [m if k_warm is None else max(1, k_warm * (p - r) - (k_warm - 1)) for r in range(p)]
    look, fill = variant.lookahead, variant.fill
    trip = [sum(f[r + 1:]) + sum(b[r + 1:]) + 2 * (p - 1 - r) * c for r in range(p)]
    events = [(0.0, r) for r in range(p)]
    asleep = [False] * p                   # waiting for an input that is not scheduled yet
    push, pop = heapq.heappush, heapq.heappop

    after = None                           # the event that would come next off the heap, kept off it
    while events or after:
        if after is not None:
            (t, r), after = after, None
        else:
            t, r = pop(events)
        if t < free[r] - EPS or nw[r] == m:
            continue                       # stale event: the rank was busy, or is done
        i, j = nb[r], nf[r]
        t_b = (bend[r + 1][i] + c if r + 1 < p else fend[r][i]) if i < j else inf
        t_f = (fend[r - 1][j] + c if r else 0.0) if j < m else inf
        mem_ok = level[r] + 1.0 <= cap[r] + EPS
        f_allowed = j < m and mem_ok and (i > 0 or j < warm[r])
        if f_allowed and look is not None and i < j:
            # when B_i's input is not scheduled yet, its earliest arrival: F_i's end plus the round trip below
            due = t_b if t_b < inf else fend[r][i] + trip[r]
            if max(t, t_f) + f[r] > due + look * f[r] + EPS:
                f_allowed = False          # the forward would delay a B that is about to arrive
        if t_b <= t + EPS:
            kind = 1
        elif f_allowed and t_f <= t + EPS:
            kind = 0
        elif nw[r] < i and ((j < m and not mem_ok) or not fill or i == m
                            or min(t_b, t_f if f_allowed else inf) >= t + w[r] - EPS):
            kind = 2                       # memory demands it, or it fills the gap
        else:
            nxt = min(t_b, t_f if f_allowed else inf)
            if nxt < inf:
                push(events, (nxt, r))
            asleep[r] = True               # also woken when a neighbour schedules what it needs
            continue
        start = t if t > free[r] else free[r]
        if kind == 0:
            end = start + f[r]
            fend[r][j] = end
            nf[r] = j + 1
            level[r] += 1.0
            orders[r].append(("F", j, r))
            if r + 1 < p and asleep[r + 1]:     # (it stays asleep until it runs something: a later op may
                push(events, (max(end + c, free[r + 1]), r + 1))   # give it an earlier input)
        elif kind == 1:
            end = start + b[r]
            bend[r][i] = end
            nb[r] = i + 1
            level[r] -= b_free
            orders[r].append(("B", i, r))
            if r and asleep[r - 1]:
                push(events, (max(end + c, free[r - 1]), r - 1))
        else:
            end = start + w[r]
            level[r] -= w_free
            orders[r].append(("W", nw[r], r))
            nw[r] += 1
        free[r] = end
        asleep[r] = False
        if events and events[0] < (end, r):
            push(events, (end, r))
        else:
            after = (end, r)               # it would be popped next anyway: skip the heap
    if any(n < m for n in nw):
        raise RuntimeError(f"list scheduling ({variant}) stopped early: {nw} W's done of {m}")
    return orders, max(free)


def critical_moves(orders: list[list[Op]], timeline) -> list[tuple[int, int, int]]:
    """Moves (rank, from, to) that may shorten the critical path: where an op on it waits for the op in front of
    it on its own rank while that op is a W or an F it does not need, swap the two; defer that W into the rank's
    next idle gap (or to the end); let the waiting op jump a few more W's and F's in front of it."""
    starts, ends = timeline.starts, timeline.ends
    r = max(range(len(ends)), key=lambda q: ends[q][-1] if ends[q] else -1.0)
    k = len(ends[r]) - 1
    moves = []
    index: dict[int, dict] = {}                            # rank -> {(kind, mb): position}, built when visited

    def position(kind: str, mb: int, rank: int) -> int:
        if rank not in index:
            index[rank] = {(op[0], op[1]): idx for idx, op in enumerate(orders[rank])}
        return index[rank][kind, mb]

    while k >= 0:
        (kind, mb, _), s = orders[r][k], starts[r][k]
        if s <= EPS:
            break
        if k > 0 and abs(ends[r][k - 1] - s) <= EPS:       # waits for the rank
            order = orders[r]
            if order[k - 1][0] in ("W", "F") and order[k - 1][1] != mb:
                moves.append((r, k - 1, k))                # swap
                if order[k - 1][0] == "W":
                    gap = next((j for j in range(k + 1, len(order)) if starts[r][j] > ends[r][j - 1] + EPS),
                               len(order))
                    if gap - 1 > k:
                        moves.append((r, k - 1, gap - 1))  # defer the W into the next gap
                i = k - 1
                while i > 0 and k - i < 4 and order[i - 1][0] in ("W", "F") and order[i - 1][1] != mb:
                    i -= 1
                    moves.append((r, k, i))                # jump several
            k -= 1
            continue
        if kind == "F" and r > 0:                          # waits for its input from rank r - 1
            r, k = r - 1, position("F", mb, r - 1)
        elif kind == "B" and r + 1 < len(orders):
            r, k = r + 1, position("B", mb, r + 1)
        else:
            k -= 1
    return moves


def _moved(order: list, src: int, dst: int) -> list | None:
    """``order`` with the op at ``src`` moved to index ``dst``; None if that breaks F < B < W of a micro-batch or
    the micro-batch order of a kind (the exact model's assumption, kept so its hints stay valid)."""
    out = order[:src] + order[src + 1:]
    out.insert(dst, order[src])
    lo, hi = min(src, dst), max(src, dst)
    op = order[src]
    for other in out[lo:hi + 1]:
        if other is op:
            continue
        if other[1] == op[1] or other[0] == op[0]:
            return None
    return out


SEVERAL_STARTS_MAX_OPS = 3_000   # plans up to this size improve their three best candidates, not only the best
HANDMADE_MAX_OPS = 12_000    # ZB-H2's builder steps through unit time: too slow to add as a candidate beyond


def handmade(problem: Problem) -> list[tuple[str, list[list[Op]]]]:
    """The hand-made split-backward schedules (ZB-H1, ZB-H2) as candidates, where they fit the cap (and the plan
    has at most HANDMADE_MAX_OPS ops)."""
    from .schedules import build

    out = []
    if 3 * problem.p * problem.m > HANDMADE_MAX_OPS:
        return out
    for name in ("zb-h1", "zb-h2"):
        orders = [list(steps) for steps in build(name, problem.p, problem.m).ranks]
        if within_cap(problem, orders):
            out.append((name, orders))
    return out


def _improve(problem: Problem, orders: list, bound: float, max_trials: int):
    """Simulate ``orders``, then keep moves on the critical path that the simulator confirms shorter:
    (plan, timeline, moves kept, moves tried)."""
    plan, tl = evaluate(problem, orders)
    kept = trials = 0
    while trials < max_trials and tl.makespan > bound + EPS:
        improved = False
        for r, src, dst in critical_moves(orders, tl):
            moved = _moved(orders[r], src, dst)
            if moved is None or peak_levels(moved, problem.w_mem) > problem.cap[r] + EPS:
                continue
            trial = orders[:]
            trial[r] = moved
            trials += 1
            if asap_makespan(problem, trial) < tl.makespan - EPS:
                trial_plan, trial_tl = evaluate(problem, trial)
                if trial_tl.makespan < tl.makespan - EPS:
                    orders, plan, tl = trial, trial_plan, trial_tl
                    kept += 1
                    improved = True
                    break
            if trials >= max_trials:
                break
        if not improved:
            break
    return plan, tl, kept, trials


def heuristic(problem: Problem, variants: Sequence[Variant] = VARIANTS, max_trials: int | None = None) -> SearchResult:
    """List scheduling in several variants (and the hand-made ZB-H1, ZB-H2 where they fit the cap), the best
    improved by moves on its critical path.

    Candidates are ranked by their as-soon-as-possible makespan (``asap_makespan``: the simulator's rule, cheap);
    the best is simulated by the course simulator.  Then moves on its critical path (``critical_moves``) are
    tried, up to ``max_trials`` (default: fewer for larger plans, so the search stays about as fast as the Zero
    Bubble heuristic); a move that screens shorter and keeps the rank under the cap is simulated, and kept when
    the simulator confirms it.  Variants stop early once one meets the proven lower bound."""
    t0 = time.perf_counter()
    bound = lower_bound(problem)
    ranked = []
    for n, variant in enumerate(variants):
        orders, span = list_schedule(problem, variant)     # under the cap by construction (tests check it)
        ranked.append((span, n, str(variant), orders))
        if span <= bound + EPS:
            break                                          # meets the proven bound: no candidate can be shorter
    if not ranked or min(r[0] for r in ranked) > bound + EPS:
        for name, orders in handmade(problem):
            ranked.append((asap_makespan(problem, orders), len(ranked), name, orders))
    if not ranked:
        raise RuntimeError("no heuristic variant stayed under the cap")   # cannot happen for caps >= 1
    ranked.sort(key=lambda x: (x[0], x[1]))
    n_ops = 3 * problem.p * problem.m
    if max_trials is None:
        max_trials = max(1, min(200, 100_000 // n_ops))
    starts = 1 if n_ops > SEVERAL_STARTS_MAX_OPS else 3       # small plans: improve the three best candidates
    best = None
    kept = trials = 0
    for span, _, source, orders in ranked[:starts]:
        plan, tl, k, n = _improve(problem, orders, bound, max_trials)
        kept, trials = kept + k, trials + n
        if best is None or tl.makespan < best[1].makespan - EPS:
            best = (plan, tl, source)
        if tl.makespan <= bound + EPS:
            break
    plan, tl, source = best
    return SearchResult(plan, tl.makespan, bound, tl.makespan <= bound + EPS, time.perf_counter() - t0,
                        list(tl.peak_activations), "heuristic", problem,
                        {"start": source, "candidates": len(ranked), "moves_kept": kept, "moves_tried": trials})


# ---- the exact method -------------------------------------------------------------------------------------------

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
        # Memory: F allocates qm at its start, B frees (1 - w_mem) qm at its end, W the rest at its end.
        b_free = round((1 - problem.w_mem) * qm)
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


# ---- one entry point --------------------------------------------------------------------------------------------

def search(p: int, m: int, costs: Costs | None = None, max_activations: float | Sequence[float] | None = None,
           exact_method: bool = False, time_limit: float | None = None, workers: int = DEFAULT_WORKERS,
           seed: int = 0) -> SearchResult:
    """The best plan found for ``p`` ranks and ``m`` micro-batches under ``costs`` with at most
    ``max_activations`` micro-batch activations alive per rank; the exact method when ``exact_method``.

    Without OR-Tools the exact method says so in one warning line and the heuristic's result comes back (its
    ``method`` is ``"heuristic"``, ``details["exact_unavailable"]`` holds the reason, ``lower_bound`` is proven)."""
    problem = Problem.make(p, m, costs, max_activations)
    if exact_method and not EXACT_AVAILABLE:
        warnings.warn(NO_EXACT, stacklevel=2)
        result = heuristic(problem)
        result.details["exact_unavailable"] = NO_EXACT
        return result
    return exact(problem, time_limit, workers, seed=seed) if exact_method else heuristic(problem)


__all__ = ["EXACT_AVAILABLE", "ExactUnavailable", "Problem", "SearchResult", "Variant", "VARIANTS", "search", "heuristic", "exact", "lower_bound",
           "list_schedule", "asap_makespan", "peak_levels", "make_plan", "evaluate"]
