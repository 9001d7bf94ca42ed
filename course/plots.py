"""Figures for timelines: Gantt charts, memory over time, bubble curves, and an ASCII timeline for terminals.

One colour per op kind everywhere; a rank's row is drawn on a grey band so idle time shows as grey.
Chunks of a rank holding several stages are told apart by shade (earlier chunk darker).
Every function draws through ``course.figure``: ``ax`` may be a matplotlib Axes (desktop), a course Panel, or
None for a new figure of the current backend (matplotlib's, or the course's own SVG where matplotlib is missing);
it returns what it drew on.  Nothing here imports matplotlib itself, so the CLI's text output does not pay for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from . import figure
from .figure import Patch
from .plan import ops_of
from .timeline import Timeline

COLORS = {"F": "#4C72B0", "B": "#55A868", "W": "#DD8452", "F&B": "#8172B3"}
IDLE = "#E5E5E5"
GB = 1e9           # memory plots in bytes show decimal gigabytes, as GPU datasheets do


def _kind(step) -> str:
    ops = ops_of(step)
    return "F&B" if len(ops) > 1 else ops[0].kind


@cache
def _shade(color: str, k: int, n: int) -> str:
    t = 0.55 * k / max(n - 1, 1)          # later chunks lighter
    rgb = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return figure.color_hex(tuple(c + (1 - c) * t for c in rgb))


def _chunks(tl: Timeline) -> tuple[dict, int]:
    """({stage: its index among the stages of its rank}, most stages on one rank): chunk k gets the k-th shade."""
    order, most = {}, 1
    for steps in tl.steps:
        mine = sorted({op.stage for st in steps for op in ops_of(st)})
        order.update({s: i for i, s in enumerate(mine)})
        most = max(most, len(mine))
    return order, most


def gantt(tl: Timeline, ax=None, title: str | None = None, labels: bool = True):
    """Draw ``tl`` as one row per rank (rank 0 on top); return the Axes (or Panel)."""
    ax = figure.panel(ax, figsize=(min(16, 4 + tl.makespan * 0.25), 0.5 + 0.45 * tl.p))
    chunk, nchunks = _chunks(tl)
    t0, span_total = tl.start, tl.makespan
    for r, rs in enumerate(tl.spans):
        y = tl.p - 1 - r
        ax.broken_barh([(0, span_total)], (y - 0.4, 0.8), facecolors=IDLE, edgecolor="none")
        bars: dict[str, list] = {}          # one collection per colour: thousands of spans draw fast
        for sp in rs:
            first = ops_of(sp.step)[0]
            color = _shade(COLORS[_kind(sp.step)], chunk.get(first.stage, 0), nchunks)
            bars.setdefault(color, []).append((sp.start - t0, sp.end - sp.start))
            if labels and (sp.end - sp.start) >= 0.025 * span_total:
                text = "/".join(str(op.mb) for op in ops_of(sp.step))
                ax.text((sp.start + sp.end) / 2 - t0, y, text, ha="center", va="center", fontsize=7, color="white")
        for color, xranges in bars.items():
            ax.broken_barh(xranges, (y - 0.4, 0.8), facecolors=color, edgecolor="white", linewidth=0.5)
    ax.set_yticks(range(tl.p))
    ax.set_yticklabels([f"rank {r}" for r in reversed(range(tl.p))])
    ax.set_xlim(0, span_total if span_total > 0 else 1)
    ax.set_xlabel(f"time ({tl.unit})")
    kinds = sorted({_kind(sp.step) for rs in tl.spans for sp in rs}, key=list(COLORS).index)
    full = kinds and "W" not in kinds and "B" in kinds
    names = {"F": "F forward", "B": "B backward (B+W)" if full else "B input grad", "W": "W weight grad",
             "F&B": "F&B overlapped"}
    handles = [Patch(color=COLORS[k], label=names[k]) for k in kinds] + [Patch(color=IDLE, label="idle")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_title(title if title is not None else
                 f"{tl.name}: makespan {tl.makespan:.4g} {tl.unit}, bubble {tl.bubble_ratio:.1%}", fontsize=10)
    return figure.result(ax)


def memory(tl: Timeline, ax=None, title: str | None = None, curves=None, gpu_mem: float | None = None):
    """Live activations per rank over time (units: one micro-batch on one rank's share).

    Bytes mode: ``curves`` gives per rank [(time, bytes), ...] (e.g. ``course.memory.PipelineMemory.curves()``,
    static state included); the axis is in GB and ``gpu_mem`` (bytes) draws the GPU's capacity as a line."""
    ax = figure.panel(ax, figsize=(8, 3))
    end = tl.start + tl.makespan
    in_bytes = curves is not None
    for r, pts in enumerate(curves if in_bytes else tl.memory):
        xs = [max(t, tl.start) - tl.start for t, _ in pts] + [end - tl.start]
        ys = [v / GB if in_bytes else v for _, v in pts] + [pts[-1][1] / GB if in_bytes else pts[-1][1]]
        peak = f"{max(ys):.1f} GB" if in_bytes else f"{tl.peak_activations[r]:g}"
        ax.step(xs, ys, where="post", label=f"rank {r} (peak {peak})")
    if gpu_mem is not None:
        ax.axhline(gpu_mem / GB, color="black", linestyle="--", linewidth=1, label=f"GPU {gpu_mem / GB:g} GB")
    ax.set_xlabel(f"time ({tl.unit})")
    ax.set_ylabel("GB held" if in_bytes else "live activations")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title(title if title is not None else f"{tl.name}: " + ("memory per rank" if in_bytes else
                                                                   "activation memory"), fontsize=10)
    return figure.result(ax)


def memory_bars(ranks, ax=None, title: str | None = None, gpu_mem: float | None = None):
    """Each rank's peak in GB as a stacked bar: weights, gradients, optimizer states, activations.

    ``ranks``: objects with ``weights``, ``grads``, ``optimizer``, ``activations`` in bytes (``RankMemory``)."""
    ax = figure.panel(ax, figsize=(6, 3))
    xs = list(range(len(ranks)))
    bottom = [0.0] * len(ranks)
    for part, color in (("weights", "#8C8C8C"), ("grads", "#B07AA1"), ("optimizer", "#EDC948"),
                        ("activations", COLORS["F"])):
        vals = [getattr(r, part) / GB for r in ranks]
        ax.bar(xs, vals, bottom=bottom, color=color, label=part)
        bottom = [b + v for b, v in zip(bottom, vals)]
    if gpu_mem is not None:
        ax.axhline(gpu_mem / GB, color="black", linestyle="--", linewidth=1, label=f"GPU {gpu_mem / GB:g} GB")
        for x, top in zip(xs, bottom):
            if top * GB > gpu_mem:
                ax.text(x, top, "OOM", ha="center", va="bottom", fontsize=7, color="#C44E52")
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs], fontsize=7)
    ax.set_xlabel("pipeline rank")
    ax.set_ylabel("GB")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    if title is not None:
        ax.set_title(title, fontsize=10)
    return figure.result(ax)


def compare(timelines: Sequence[Timeline], titles: Sequence[str] | None = None, memory_too: bool = False):
    """Gantt charts stacked on one shared time axis (and memory beside them); return the Figure."""
    n = len(timelines)
    longest = max(t.makespan for t in timelines)
    heights = [0.6 + 0.45 * t.p for t in timelines]
    cols = 2 if memory_too else 1
    fig, axes = figure.subplots(n, cols, figsize=(min(16, 5 + longest * 0.25) + (5 if memory_too else 0),
                                                  sum(heights)),
                                squeeze=False, gridspec_kw={"height_ratios": heights})
    for i, tl in enumerate(timelines):
        gantt(tl, ax=axes[i][0], title=titles[i] if titles else None)
        axes[i][0].set_xlim(0, longest)
        if memory_too:
            memory(tl, ax=axes[i][1])
    fig.tight_layout()
    return fig


def bubble_curves(ps: Sequence[int] = (2, 4, 8, 16), ms: Sequence[int] = tuple(range(1, 65)), v: int = 1,
                  ax=None, highlight: tuple[int, int] | None = None):
    """Bubble ratio (p-1)/(v*m+p-1) against m for several p (the closed form)."""
    ax = figure.panel(ax, figsize=(7, 3.5))
    for p in ps:
        ax.plot(list(ms), [(p - 1) / (v * m + p - 1) for m in ms], label=f"p={p}")
    if highlight:
        p, m = highlight
        ax.plot([m], [(p - 1) / (v * m + p - 1)], "ko")
        ax.annotate(f"p={p}, m={m}: {(p - 1) / (v * m + p - 1):.1%}", (m, (p - 1) / (v * m + p - 1)),
                    textcoords="offset points", xytext=(8, 8), fontsize=8)
    ax.set_xlabel("micro-batches m")
    ax.set_ylabel("bubble ratio")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("bubble = (p-1)/(" + ("v*" if v != 1 else "") + "m+p-1)", fontsize=10)
    return figure.result(ax)


# ---- terminal ------------------------------------------------------------------------------------
_GLYPHS = {"F": "0123456789", "B": "abcdefghijklmnopqrstuvwxyz", "W": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


def ascii_timeline(tl: Timeline, max_width: int = 160) -> str:
    """One line per rank; F shows the micro-batch digit, B a lower-case letter, W an upper-case letter (mod 10/26),
    an overlapped F&B '#', idle '.'.  One character per cost unit when it fits, coarser otherwise."""
    durations = [sp.end - sp.start for rs in tl.spans for sp in rs if sp.end > sp.start]
    if not durations:
        return "\n".join(f"rank {r} ||" for r in range(tl.p))
    shortest = min(durations)
    scale = 1.0 / shortest if shortest < 1 else 1.0          # chars per time unit: shortest op gets >= 1 char
    scale = min(scale, max_width / tl.makespan)
    width = max(1, round(tl.makespan * scale))
    lines = []
    for r, rs in enumerate(tl.spans):
        row = ["."] * width
        for sp in rs:
            a = round((sp.start - tl.start) * scale)
            b = max(a + 1, round((sp.end - tl.start) * scale))
            kind = _kind(sp.step)
            op = ops_of(sp.step)[0]
            glyph = "#" if kind == "F&B" else _GLYPHS[kind][op.mb % len(_GLYPHS[kind])]
            for c in range(a, min(b, width)):
                row[c] = glyph
        lines.append(f"rank {r} |{''.join(row)}|")
    per = 1 / scale
    legend = (f"{tl.name}: makespan {tl.makespan:g} {tl.unit}, bubble {tl.bubble_ratio:.1%}, "
              f"peak activations {[round(x, 3) for x in tl.peak_activations]}; "
              f"1 char = {per:g} {tl.unit}; F=0-9, B=a-z, W=A-Z (micro-batch), F&B=#, idle=.")
    return "\n".join(lines + [legend])
