"""Sentences the data must support, and predictions the learner makes before a cell answers.

A chapter never writes a conclusion ("1F1B is more sensitive to latency", "always on rank 0") as a fixed string.
It passes the sentence through :func:`claim` together with the condition that makes it true:

    md(claim(lat_1f1b > lat_gpipe, text("latency-1f1b", lat_1f1b=lat_1f1b, lat_gpipe=lat_gpipe),
             lat_1f1b=lat_1f1b, lat_gpipe=lat_gpipe))

(``text`` gives the chapter's run-time sentence in its edition's language, see ``course/chapter.py``.)

If the numbers stop supporting the sentence, the notebook fails with the sentence and the numbers, so the prose
cannot silently outlive a change of the simulator or of a parameter.  Measurements that vary from machine to
machine (timings on the learner's laptop) must not fail there: they give ``otherwise``, the sentence for the other
outcome, and the data pick the wording.

A prediction is a markdown cell starting with ``**Predict:**`` (``**预测：**`` in Chinese), then a code cell where the learner assigns a guess
(left as ``None`` by default), then the cells that compute the answer, then :func:`reveal`.
"""

from __future__ import annotations

import math
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
