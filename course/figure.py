"""Figures without a plotting library: a small model of what a chapter draws, and the backend that shows it.

A :class:`Figure` holds a grid of :class:`Panel` s; a Panel records what is drawn on it as plain data (line series,
bars, rectangles, spans, reference lines, text, box plots) plus its labels, scales, ticks and legend.  Its methods
are named and called like matplotlib's ``Axes`` methods the course uses, so the same drawing code runs on either::

    from course import figure

    fig, ax = figure.subplots(figsize=(6, 3))   # matplotlib's Figure and Axes, or the course's own
    ax.semilogx([1, 2, 4, 8], [3, 5, 6, 6], "o-", base=2)
    ax.set_xlabel("rows")
    figure.show()

Two renderers draw the model: matplotlib (``course.render_mpl``; the desktop edition) and an SVG writer of the
course's own, standard library only (``course.render_svg``; the browser edition, where matplotlib does not exist).
``BACKEND`` is ``"matplotlib"`` when matplotlib can be imported and ``"svg"`` otherwise; the environment variable
``COURSE_FIGURES=svg`` forces the SVG backend (tests use it to run the browser's path under CPython).

With the matplotlib backend ``subplots`` returns pyplot's own Figure and Axes, so existing matplotlib code and
``plt.show()`` keep working; ``course.plots`` draws into a Panel that forwards every element to the Axes it is
bound to (``panel(ax)``).  With the SVG backend every figure is a course Figure; ``show()`` displays those made
since the last ``show()``, as pyplot does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .figure_elements import (
    TAB10,
    Axis,
    Box,
    Legend,
    Line,
    Rect,
    RefLine,
    Span,
    Swatch,
    Text,
    box_stats,
    color_hex,
    parse_fmt,
)
from .optional import importable

BACKENDS = ("matplotlib", "svg")


def choose_backend() -> str:
    forced = os.environ.get("COURSE_FIGURES", "")
    if forced:
        if forced not in BACKENDS:
            raise ValueError(f"COURSE_FIGURES={forced!r}: use one of {', '.join(BACKENDS)}")
        return forced
    return "matplotlib" if importable("matplotlib") else "svg"


BACKEND = choose_backend()


def Patch(*, color, label: str):   # stands in for the class matplotlib.patches.Patch
    """A legend handle for ``legend(handles=[...])``: matplotlib's Patch with matplotlib, else a Swatch."""
    if BACKEND == "matplotlib":
        from matplotlib.patches import Patch as MplPatch
        return MplPatch(color=color, label=label)
    return Swatch(color, label)


class Panel:
    """One plot area; mirrors the matplotlib Axes methods the course uses.  Bound to a matplotlib Axes
    (``panel(ax)``), it also draws each element there as it is added."""

    def __init__(self, figure: Figure | None = None, mpl_axes=None):
        self.figure, self.mpl = figure, mpl_axes
        self.elements: list = []
        self.x, self.y = Axis(), Axis()
        self.title, self.title_size = "", 12.0
        self.legend_box: Legend | None = None
        self.axis_on = True
        self._cycle = 0

    # -- bookkeeping
    def _add(self, *elements):
        self.elements += elements
        if self.mpl is not None:
            from .render_mpl import draw_elements
            draw_elements(self.mpl, elements)
        return list(elements)

    def _next_color(self, color) -> str:
        if color is not None:
            return color_hex(color)
        c = TAB10[self._cycle % len(TAB10)]
        self._cycle += 1
        return c

    def _set(self, what: str, *args, **kwargs) -> None:
        if self.mpl is not None:
            getattr(self.mpl, what)(*args, **kwargs)

    # -- series
    def plot(self, x, y=None, fmt: str | None = None, *, color=None, label=None, linestyle=None, ls=None,
             linewidth=None, lw=None, marker=None, markersize=None, where=None):
        if y is None or isinstance(y, str):
            x, y, fmt = list(range(len(list(x)))), x, y if isinstance(y, str) else fmt
        fcolor, fmarker, fstyle = parse_fmt(fmt)
        style = linestyle or ls or fstyle or "-"
        line = Line([float(v) for v in x], [float(v) for v in y], self._next_color(color or fcolor),
                    style, float(linewidth or lw or 1.5), marker or fmarker, float(markersize or 6.0), where,
                    label)
        if len(line.xs) != len(line.ys):
            raise ValueError(f"plot: {len(line.xs)} x values but {len(line.ys)} y values")
        return self._add(line)[0]

    def semilogx(self, x, y=None, fmt=None, *, base: float = 10, **kwargs):
        line = self.plot(x, y, fmt, **kwargs)
        self.set_xscale("log", base=base)
        return line

    def step(self, x, y, fmt=None, *, where: str = "pre", **kwargs):
        if where != "post":
            raise ValueError(f"step: where={where!r}; only 'post' is supported")
        return self.plot(x, y, fmt, where="post", **kwargs)

    def _bars(self, positions, lengths, thick, base, color, label, kind: str) -> list:
        """Bars along x ('bar') or y ('barh'); string positions become categories 0..n-1 with those tick labels."""
        pos = list(positions)
        if pos and all(isinstance(v, str) for v in pos):
            (self.set_xticks if kind == "bar" else self.set_yticks)(list(range(len(pos))), pos)
            pos = list(range(len(pos)))
        n = len(pos)
        thick = list(thick) if isinstance(thick, (list, tuple)) else [thick] * n
        base = [0.0] * n if base is None else list(base)
        each = list(color) if isinstance(color, (list, tuple)) and not _is_rgb(color) else None
        one = None if each else self._next_color(color)
        rects = []
        for i, (c, length, t, b) in enumerate(zip(pos, lengths, thick, base)):
            fill, name = color_hex(each[i]) if each else one, label if i == 0 else None
            rects.append(Rect(float(c) - t / 2, float(b), float(t), float(length), fill, label=name, kind=kind)
                         if kind == "bar" else
                         Rect(float(b), float(c) - t / 2, float(length), float(t), fill, label=name, kind=kind))
        return self._add(*rects)

    def bar(self, x, height, width: float | Sequence[float] = 0.8, bottom=None, *, color=None, label=None):
        return self._bars(x, list(height), width, bottom, color, label, "bar")

    def barh(self, y, width, height: float = 0.8, left=None, *, color=None, label=None):
        return self._bars(y, list(width), height, left, color, label, "barh")

    def broken_barh(self, xranges, yrange, *, facecolors=None, facecolor=None, color=None, edgecolor="none",
                    linewidth=0.0, label=None):
        y, h = yrange
        fc = facecolors if facecolors is not None else (facecolor if facecolor is not None else color)
        per = isinstance(fc, (list, tuple)) and not _is_rgb(fc)
        default = None if per else color_hex(fc)
        edge = color_hex(edgecolor) if edgecolor not in (None, "none") else "none"
        return self._add(*[Rect(float(x0), float(y), float(w), float(h), color_hex(fc[i]) if per else default,
                                edge, float(linewidth), label=label if i == 0 else None)
                           for i, (x0, w) in enumerate(xranges)])

    def axvspan(self, xmin, xmax, *, color=None, alpha=1.0, label=None):
        return self._add(Span("x", float(xmin), float(xmax), color_hex(color, TAB10[0]), float(alpha), label))[0]

    def axhspan(self, ymin, ymax, *, color=None, alpha=1.0, label=None):
        return self._add(Span("y", float(ymin), float(ymax), color_hex(color, TAB10[0]), float(alpha), label))[0]

    def axvline(self, x=0.0, *, color=None, linestyle="-", ls=None, linewidth=1.0, lw=None, label=None):
        return self._add(RefLine("x", float(x), color_hex(color, TAB10[0]), ls or linestyle, float(lw or linewidth),
                                 label))[0]

    def axhline(self, y=0.0, *, color=None, linestyle="-", ls=None, linewidth=1.0, lw=None, label=None):
        return self._add(RefLine("y", float(y), color_hex(color, TAB10[0]), ls or linestyle, float(lw or linewidth),
                                 label))[0]

    def text(self, x, y, s, *, ha="left", va="baseline", fontsize=10.0, color="#000000", wrap=False):
        return self._add(Text(float(x), float(y), str(s), ha, va, float(fontsize), color_hex(color)))[0]

    def annotate(self, text, xy, *, xytext=(0, 0), textcoords="offset points", fontsize=10.0, color="#000000"):
        if textcoords != "offset points":
            raise ValueError(f"annotate: textcoords={textcoords!r}; only 'offset points' is supported")
        return self._add(Text(float(xy[0]), float(xy[1]), str(text), "left", "baseline", float(fontsize),
                              color_hex(color), (float(xytext[0]), float(xytext[1])), annotate=True))[0]

    def boxplot(self, data, *, positions=None, widths=0.5, whis=1.5, orientation="vertical", vert=None,
                boxprops=None):
        sets = [list(d) for d in data]
        positions = list(positions) if positions is not None else list(range(1, len(sets) + 1))
        horizontal = orientation == "horizontal" if vert is None else not vert
        color = color_hex((boxprops or {}).get("color"), "#000000")
        stats = [box_stats(values, whis) for values in sets]
        return self._add(*[Box(float(pos), s["q1"], s["med"], s["q3"], s["whislo"], s["whishi"], s["fliers"],
                               float(widths), horizontal, color) for s, pos in zip(stats, positions)])

    # -- axes
    def set_title(self, title, fontsize=12.0, **_):
        self.title, self.title_size = str(title), float(fontsize)
        self._set("set_title", self.title, fontsize=fontsize)

    def get_title(self) -> str:
        return self.title

    def set_xlabel(self, label, **_):
        self.x.label = str(label)
        self._set("set_xlabel", self.x.label)

    def set_ylabel(self, label, **_):
        self.y.label = str(label)
        self._set("set_ylabel", self.y.label)

    def get_xlabel(self) -> str:
        return self.x.label

    def get_ylabel(self) -> str:
        return self.y.label

    def set_xscale(self, scale, base: float = 10):
        self.x.scale, self.x.base = scale, float(base)
        self._set("set_xscale", scale, **({"base": base} if scale == "log" else {}))

    def set_yscale(self, scale, base: float = 10):
        self.y.scale, self.y.base = scale, float(base)
        self._set("set_yscale", scale, **({"base": base} if scale == "log" else {}))

    def set_xlim(self, left=None, right=None):
        if isinstance(left, (tuple, list)):
            left, right = left
        old = self.x.lim or (None, None)
        self.x.lim = (old[0] if left is None else float(left), old[1] if right is None else float(right))
        self._set("set_xlim", left, right)

    def set_ylim(self, bottom=None, top=None):
        if isinstance(bottom, (tuple, list)):
            bottom, top = bottom
        old = self.y.lim or (None, None)
        self.y.lim = (old[0] if bottom is None else float(bottom), old[1] if top is None else float(top))
        self._set("set_ylim", bottom, top)

    def set_xticks(self, ticks, labels=None, **_):
        self.x.ticks = [float(t) for t in ticks]
        self.x.ticklabels = None if labels is None else [str(s) for s in labels]
        self._set("set_xticks", self.x.ticks, labels)

    def set_yticks(self, ticks, labels=None, **_):
        self.y.ticks = [float(t) for t in ticks]
        self.y.ticklabels = None if labels is None else [str(s) for s in labels]
        self._set("set_yticks", self.y.ticks, labels)

    def set_xticklabels(self, labels, **_):
        self.x.ticklabels = [str(s) for s in labels]
        self._set("set_xticklabels", self.x.ticklabels)

    def set_yticklabels(self, labels, **_):
        self.y.ticklabels = [str(s) for s in labels]
        self._set("set_yticklabels", self.y.ticklabels)

    def invert_yaxis(self):
        self.y.inverted = not self.y.inverted
        self._set("invert_yaxis")

    def set_axis_off(self):
        self.axis_on = False
        self._set("set_axis_off")

    def legend(self, handles=None, *, loc="best", bbox_to_anchor=None, fontsize=10.0, frameon=True):
        if handles is None:
            entries = [(("line" if isinstance(e, (Line, RefLine)) else "patch"), e.color, e.label)
                       for e in self.elements if getattr(e, "label", None)]
        else:
            entries = [("patch", color_hex(h.get_facecolor()), h.get_label()) for h in handles]
        outside = bbox_to_anchor is not None and float(bbox_to_anchor[0]) >= 1.0
        above = bbox_to_anchor is not None and not outside and float(bbox_to_anchor[1]) >= 1.0
        self.legend_box = Legend(entries, loc, outside, above, float(fontsize), bool(frameon))
        if self.mpl is not None:
            from .render_mpl import draw_legend
            draw_legend(self.mpl, self.legend_box)
        return self.legend_box

    def get_legend(self) -> Legend | None:
        return self.legend_box


def _is_rgb(value) -> bool:
    return isinstance(value, (tuple, list)) and len(value) in (3, 4) and all(isinstance(v, float) for v in value)


class Figure:
    """A grid of Panels and a size in inches; shown as SVG (``_repr_svg_``) where matplotlib is missing."""

    def __init__(self, figsize: tuple[float, float] = (6.4, 4.8)):
        self.size = [float(figsize[0]), float(figsize[1])]
        self.panels: list[Panel] = []
        self.grid = (1, 1)
        self.width_ratios: list[float] | None = None
        self.height_ratios: list[float] | None = None
        self.sharex = self.sharey = False

    @property
    def axes(self) -> list[Panel]:
        return self.panels

    def clear(self) -> None:
        self.panels, self.grid = [], (1, 1)
        self.width_ratios = self.height_ratios = None
        self.sharex = self.sharey = False

    def add_subplot(self, *_args) -> Panel:
        return self.subplots()

    def subplots(self, nrows: int = 1, ncols: int = 1, *, squeeze: bool = True, sharex: bool = False,
                 sharey: bool = False, width_ratios=None, height_ratios=None, gridspec_kw=None):
        if self.panels:
            raise ValueError("this figure already has panels: draw into them, or clear() it first")
        gridspec_kw = gridspec_kw or {}
        self.grid = (nrows, ncols)
        self.width_ratios = list(width_ratios or gridspec_kw.get("width_ratios") or [1] * ncols)
        self.height_ratios = list(height_ratios or gridspec_kw.get("height_ratios") or [1] * nrows)
        self.sharex, self.sharey = bool(sharex), bool(sharey)
        self.panels = [Panel(self) for _ in range(nrows * ncols)]
        rows = [self.panels[r * ncols:(r + 1) * ncols] for r in range(nrows)]
        if not squeeze:
            return rows
        if nrows == ncols == 1:
            return self.panels[0]
        return self.panels if nrows == 1 or ncols == 1 else rows

    def set_size_inches(self, w, h=None) -> None:
        if isinstance(w, (tuple, list)):
            w, h = w
        self.size = [float(w), float(self.size[1] if h is None else h)]

    def get_size_inches(self) -> tuple[float, float]:
        return tuple(self.size)

    def tight_layout(self) -> None:
        """The SVG layout always leaves room for labels; nothing to do."""

    def svg(self) -> str:
        from .render_svg import render
        return render(self)

    def _repr_svg_(self) -> str:
        return self.svg()


# ---- the backend-neutral entry points ---------------------------------------------------------------------------
_pending: list[Figure] = []     # SVG backend: figures made since the last show()


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] = (6.4, 4.8), **kwargs):
    """``(figure, axes)`` as ``matplotlib.pyplot.subplots``: pyplot's own with matplotlib, course ones without."""
    if BACKEND == "matplotlib":
        import matplotlib.pyplot as plt
        return plt.subplots(nrows, ncols, figsize=figsize, **kwargs)
    fig = Figure(figsize)
    _pending.append(fig)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def new_figure(figsize: tuple[float, float]):
    """A figure outside pyplot's bookkeeping (for widgets): matplotlib's on an Agg canvas, or a course Figure."""
    if BACKEND == "matplotlib":
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as MplFigure
        fig = MplFigure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(fig)
        return fig
    return Figure(figsize)


def panel(ax=None, figsize: tuple[float, float] = (6.4, 4.8)) -> Panel:
    """The Panel a plot function draws into: ``ax`` itself when it is one, a Panel bound to ``ax`` when it is a
    matplotlib Axes, or the only panel of a new figure (``subplots``)."""
    if isinstance(ax, Panel):
        return ax
    if ax is None:
        _, ax = subplots(figsize=figsize)
        if isinstance(ax, Panel):
            return ax
    return Panel(mpl_axes=ax)


def result(p: Panel):
    """What a plot function returns: the matplotlib Axes a Panel is bound to, else the Panel."""
    return p.mpl if p.mpl is not None else p


def show(fig=None) -> None:
    """Display ``fig``, or every figure made since the last show (pyplot's ``show()`` with matplotlib)."""
    if BACKEND == "matplotlib" and not isinstance(fig, Figure):
        import matplotlib.pyplot as plt
        if fig is None:
            plt.show()
        else:
            _display(fig)
        return
    figures = [fig] if fig is not None else list(_pending)
    _pending.clear()
    for f in figures:
        _display(f)


def _display(obj) -> None:
    if "IPython" in sys.modules:
        from IPython.display import display
        display(obj)


__all__ = ["BACKEND", "Figure", "Panel", "Patch", "Swatch", "TAB10", "subplots", "new_figure", "panel", "result",
           "show", "box_stats", "color_hex"]
