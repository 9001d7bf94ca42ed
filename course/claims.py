"""Sentences the data must support, rules checked over a range, and predictions the learner makes before a cell answers.

A chapter never writes a conclusion ("1F1B is more sensitive to latency", "always on rank 0") as a fixed string.
It passes the sentence through :func:`claim` together with the condition that makes it true:

    md(claim(lat_1f1b > lat_gpipe, text("latency-1f1b", lat_1f1b=lat_1f1b, lat_gpipe=lat_gpipe),
             lat_1f1b=lat_1f1b, lat_gpipe=lat_gpipe))

(``text`` gives the chapter's run-time sentence in its edition's language, see ``course/chapter.py``.)

If the numbers stop supporting the sentence, the notebook fails with the sentence and the numbers, so the prose
cannot silently outlive a change of the simulator or of a parameter.  Measurements that vary from machine to
machine (timings on the learner's laptop) must not fail there: they give ``otherwise``, the sentence for the other
outcome, and the data pick the wording.

A *rule* the prose draws from a few rows ("ZB-H2 beats ZB-H1 exactly when ...", "the best v lies in the middle")
must hold beyond those rows: :func:`sweep` checks it on a seeded random sample of the range the chapter states, and
the sentence is guarded by the sweep's verdict, so it fails wherever in that range the rule breaks.  A figure
measured on a random sample is printed with its spread, :func:`bootstrap`'s interval, and worded to the interval.

A prediction is a markdown cell starting with ``**Predict:**`` (``**预测：**`` in Chinese), then a code cell where
the learner assigns a guess (left as ``None`` by default), then the cells that compute the answer, then
:func:`reveal`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .i18n import tr


class ClaimError(AssertionError):
    """A sentence of the course that the data no longer support."""


def claim(holds: bool, text: str, otherwise: str | None = None, **figures: Any) -> str:
    """``text`` when ``holds``; else ``otherwise`` when given, else raise ClaimError with the sentence and figures."""
    if not isinstance(holds, bool):
        holds = bool(holds)          # numpy booleans and the like
    if holds:
        return text
    if otherwise is not None:
        return otherwise
    numbers = ", ".join(f"{k}={v!r}" for k, v in figures.items())
    raise ClaimError(f"the data no longer support: {text!r}" + (f" ({numbers})" if numbers else ""))


def reveal(guess: Any, answer: Any, explanation: str = "", *, rel_tol: float = 0.05) -> str:
    """Markdown comparing the learner's ``guess`` with the computed ``answer`` (numbers match within ``rel_tol``).

    ``guess`` of None means the learner skipped the prediction: the answer is shown all the same."""
    if guess is None:
        verdict = tr("你没有填预测。答案是 **{a}**。", "You left the prediction empty. The answer is **{a}**. ")
    elif _matches(guess, answer, rel_tol):
        verdict = tr("你的预测 **{g}** 对了（答案 {a}）。", "Your prediction **{g}** is right (answer: {a}). ")
    else:
        verdict = tr("你的预测是 **{g}**，答案是 **{a}**。", "You predicted **{g}**; the answer is **{a}**. ")
    verdict = verdict.format(g=_fmt(guess), a=_fmt(answer))
    return verdict + explanation


def _matches(guess: Any, answer: Any, rel_tol: float) -> bool:
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and isinstance(guess, (int, float)):
        return math.isclose(float(guess), float(answer), rel_tol=rel_tol, abs_tol=1e-9)
    if isinstance(answer, (list, tuple)) and isinstance(guess, (list, tuple)):
        return len(guess) == len(answer) and all(_matches(g, a, rel_tol) for g, a in zip(guess, answer))
    if isinstance(answer, str) and isinstance(guess, str):
        return guess.strip().lower() == answer.strip().lower()
    return guess == answer


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    return str(x)


@dataclass
class Sweep:
    """A rule checked at ``checked`` points of a stated range; ``counterexamples`` are the points where it broke."""

    checked: int
    counterexamples: list[dict] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.counterexamples

    def figures(self) -> dict:
        """For claim(): the first counterexample (so a failing notebook names it) and how many points broke."""
        first = self.counterexamples[0] if self.counterexamples else {}
        return {"checked": self.checked, "broken": len(self.counterexamples), **first}


def sweep_points(space: dict[str, Any], n: int, seed: int = 0, corners: bool = True) -> list[dict[str, Any]]:
    """The points ``sweep`` checks: ``n`` seeded random points of ``space``, then its corners when ``corners``."""
    rng = random.Random(seed)

    def draw(spec, pick_end=None):
        if isinstance(spec, list):
            return spec[pick_end] if pick_end is not None else rng.choice(spec)
        lo, hi = spec
        if pick_end is not None:
            return (lo, hi)[pick_end]
        return rng.randint(lo, hi) if isinstance(lo, int) and isinstance(hi, int) else rng.uniform(lo, hi)

    names = list(space)
    points = [{k: draw(space[k]) for k in names} for _ in range(n)]
    if corners:
        points += [{k: draw(space[k], (mask >> i) & 1 and -1) for i, k in enumerate(names)}
                   for mask in range(2 ** min(len(names), 6))]
    return points


def sweep(rule: Callable[..., bool], space: dict[str, Any], n: int, seed: int = 0,
          corners: bool = True) -> Sweep:
    """Check ``rule(**point)`` at ``n`` seeded random points of ``space`` (plus its corners when ``corners``).

    ``space`` maps each parameter to a list (one of its values), an ``(lo, hi)`` pair of ints (an integer in
    [lo, hi]) or an ``(lo, hi)`` pair with a float (a number in [lo, hi])."""
    points = sweep_points(space, n, seed, corners)
    broken = [pt for pt in points if not rule(**pt)]
    return Sweep(len(points), broken)


def bootstrap(values: Sequence[float], stat: Callable[[Sequence[float]], float], n: int = 2000, seed: int = 0,
              level: float = 0.95) -> tuple[float, float]:
    """A percentile bootstrap interval of ``stat(values)``: resample ``values`` with replacement ``n`` times."""
    if not values:
        raise ValueError("bootstrap needs at least one value")
    rng = random.Random(seed)
    k = len(values)
    stats = sorted(stat([values[rng.randrange(k)] for _ in range(k)]) for _ in range(n))
    tail = (1 - level) / 2
    return stats[int(tail * (n - 1))], stats[int((1 - tail) * (n - 1))]
