"""Cutting a model's layers into p contiguous pipeline stages.

The pipeline runs at the pace of its slowest stage, so the goal is min-max: make the most expensive stage
(the *bottleneck*) as cheap as possible.  Two methods:

- ``dp``: exact.  Dynamic programming over (stages used, layers covered); O(p * L^2) time.  Vectorised with numpy
  where it is installed; the browser edition has no numpy and runs the same recurrence in plain Python
  (``_dp_bounds_pure``, held equal to the numpy one by tests/test_partition.py).
- ``greedy``: the seed blog post's heuristic, kept for comparison: walk the layers, cut as soon as the running
  sum reaches total/p.  It can leave a stage much heavier than needed, or use fewer than p stages.

Communication: cutting between layer i and i+1 costs ``comm[i]`` (a scalar means every cut costs the same).
Both stages beside a cut pay it: one sends activations forward and receives gradients back, the other the
reverse.  So a stage's cost is the sum of its layers plus the cost of the cuts at its two ends.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from .optional import importable
from .validation import check_counts, is_number

METHODS = ("dp", "greedy")

Comm = float | Sequence[float]


@dataclass(frozen=True)
class Partition:
    stages: list[list[int]]     # the layer indices of each stage, in order
    stage_costs: list[float]    # compute + communication of each stage
    method: str

    @property
    def bottleneck(self) -> float:
        return max(self.stage_costs)

    @property
    def sizes(self) -> list[int]:
        return [len(s) for s in self.stages]

    def to_json(self) -> dict:
        return {"method": self.method, "stages": self.stages, "stage_costs": self.stage_costs,
                "bottleneck": self.bottleneck}


def partition(layers: Sequence[float], p: int, method: str = "dp", comm: Comm = 0.0) -> Partition:
    """Cut ``layers`` (per-layer times, in model order) into ``p`` contiguous stages with ``method``."""
    layers, cut_cost = _check(layers, p, comm)
    if method == "dp":
        bounds = (_dp_bounds if HAVE_NUMPY else _dp_bounds_pure)(layers, p, cut_cost)
    elif method == "greedy":
        bounds = _greedy_bounds(layers, p)
    else:
        raise ValueError(f"unknown partition method {method!r}; allowed: {', '.join(METHODS)}")
    return _from_bounds(layers, bounds, cut_cost, method)


def stage_costs(layers: Sequence[float], bounds: Sequence[int], comm: Comm = 0.0) -> list[float]:
    """Cost of each stage when stage k holds layers bounds[k]..bounds[k+1]-1 (bounds[0]=0, bounds[-1]=L)."""
    layers, cut_cost = _check(layers, 1, comm)
    return _from_bounds(layers, list(bounds), cut_cost, "given").stage_costs


def brute_force(layers: Sequence[float], p: int, comm: Comm = 0.0) -> float:
    """The optimal bottleneck by trying every placement of the p-1 cuts (for tests; C(L-1, p-1) cases)."""
    layers, cut_cost = _check(layers, p, comm)
    L = len(layers)
    return min(max(_from_bounds(layers, [0, *cuts, L], cut_cost, "brute").stage_costs)
               for cuts in itertools.combinations(range(1, L), p - 1))


# ---- methods -------------------------------------------------------------------------------------------
def _dp_bounds(layers: list[float], p: int, cut_cost: list[float]) -> list[int]:
    """best[k][j]: the smallest bottleneck covering layers[:j] with k+1 stages; choice[k][j]: where stage k starts."""
    import numpy as np

    L = len(layers)
    prefix = np.concatenate([[0.0], np.cumsum(layers)])
    # cost of a stage holding layers i..j-1: compute + the cut before it (i > 0) + the cut after it (j < L)
    before = np.concatenate([[0.0], cut_cost])          # before[i] for i in 0..L-1
    after = np.concatenate([cut_cost, [0.0]])           # after[j-1] for j in 1..L

    def seg(i: np.ndarray, j: int) -> np.ndarray:
        return prefix[j] - prefix[i] + before[i] + after[j - 1]

    best = np.full((p, L + 1), np.inf)
    choice = np.zeros((p, L + 1), dtype=int)
    best[0, 1:] = [seg(np.array([0]), j)[0] for j in range(1, L + 1)]
    for k in range(1, p):
        for j in range(k + 1, L + 1):          # k+1 stages need at least k+1 layers
            starts = np.arange(k, j)            # stage k holds layers start..j-1
            cand = np.maximum(best[k - 1, starts], seg(starts, j))
            at = int(np.argmin(cand))
            best[k, j], choice[k, j] = cand[at], starts[at]
    return _walk_back(choice, p, L)


def _dp_bounds_pure(layers: list[float], p: int, cut_cost: list[float]) -> list[int]:
    """``_dp_bounds`` in plain Python: the same sums in the same order, the first minimum on ties."""
    L = len(layers)
    prefix = [0.0, *accumulate(layers)]
    before, after = [0.0, *cut_cost], [*cut_cost, 0.0]

    def seg(i: int, j: int) -> float:
        return prefix[j] - prefix[i] + before[i] + after[j - 1]

    best = [[math.inf] * (L + 1) for _ in range(p)]
    choice = [[0] * (L + 1) for _ in range(p)]
    best[0][1:] = [seg(0, j) for j in range(1, L + 1)]
    for k in range(1, p):
        prev, row, pick = best[k - 1], best[k], choice[k]
        for j in range(k + 1, L + 1):
            at, low = k, math.inf
            for i in range(k, j):
                c = max(prev[i], seg(i, j))
                if c < low:
                    at, low = i, c
            row[j], pick[j] = low, at
    return _walk_back(choice, p, L)


def _walk_back(choice, p: int, L: int) -> list[int]:
    bounds = [L]
    for k in range(p - 1, 0, -1):
        bounds.append(int(choice[k][bounds[-1]]))
    return [0] + bounds[::-1]


def _greedy_bounds(layers: list[float], p: int) -> list[int]:
    """The blog's greedy: cut once the running sum reaches total/p, if enough layers remain for the rest.

    (The post's listing lost its comparison operators; read as ``sum >= target``, ``stages left > 0`` and
    ``layers left >= stages left``.)  It ignores communication and never looks ahead, so it can end with fewer
    than p non-empty stages; the missing ones come back empty."""
    target = sum(layers) / p
    bounds, running = [0], 0.0
    for i, t in enumerate(layers):
        running += t
        stages_left = p - len(bounds)          # stages still to open after the current one
        layers_left = len(layers) - i - 1
        if running >= target and stages_left > 0 and layers_left >= stages_left:
            bounds.append(i + 1)
            running = 0.0
    bounds.append(len(layers))
    bounds += [len(layers)] * (p + 1 - len(bounds))   # pad with empty stages
    return bounds


# ---- helpers -------------------------------------------------------------------------------------------
def _from_bounds(layers: list[float], bounds: list[int], cut_cost: list[float], method: str) -> Partition:
    L = len(layers)
    stages = [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]
    costs = []
    for a, b in zip(bounds, bounds[1:]):
        if a == b:
            costs.append(0.0)
            continue
        c = sum(layers[a:b])
        c += cut_cost[a - 1] if a > 0 else 0.0
        c += cut_cost[b - 1] if b < L else 0.0
        costs.append(float(c))
    return Partition(stages, costs, method)


def _check(layers, p, comm) -> tuple[list[float], list[float]]:
    layers = list(layers)
    if not layers:
        raise ValueError("layers is empty: give one time per layer, e.g. 1,2,2,1")
    if any(not is_number(t) or t < 0 for t in layers):
        raise ValueError(f"layer times must be finite non-negative numbers, got {layers}")
    check_counts(p=p)
    if p > len(layers):
        raise ValueError(f"cannot cut {len(layers)} layers into p={p} non-empty stages: need p <= {len(layers)}")
    if isinstance(comm, numbers.Real):
        cut_cost = [float(comm)] * (len(layers) - 1)
    else:
        cut_cost = [float(c) for c in comm]
        if len(cut_cost) != len(layers) - 1:
            raise ValueError(f"comm lists {len(cut_cost)} values; give one number or one per cut "
                             f"({len(layers) - 1} for {len(layers)} layers)")
    if not all(math.isfinite(c) and c >= 0 for c in cut_cost):
        raise ValueError(f"comm must be finite and non-negative, got {comm!r}")
    total = sum(layers) + 2 * sum(cut_cost)   # what one stage holding everything would cost
    if not math.isfinite(total):
        raise ValueError(f"layer and cut costs too large: their sum overflows to {total} (give costs whose sum "
                         "is finite)")
    return [float(t) for t in layers], cut_cost


HAVE_NUMPY = importable("numpy")

__all__ = ["METHODS", "Partition", "partition", "stage_costs", "brute_force"]
