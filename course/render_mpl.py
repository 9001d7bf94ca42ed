"""Draw the course's figure model (``course.figure``) with matplotlib: the desktop edition's renderer.

Each element becomes the matplotlib call it was recorded from (a Line -> ``Axes.plot``, a Rect -> ``bar``/``barh``/
``broken_barh``, a Box -> ``bxp`` with the statistics the model computed), so a Panel drawn here looks as if the
chapter had called matplotlib itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .figure_elements import Box, Legend, Line, Rect, RefLine, Span, Text

if TYPE_CHECKING:      # annotations only: course.figure imports this module
    from .figure import Figure, Panel


def draw_elements(ax, elements) -> None:
    """Draw model elements on the matplotlib Axes ``ax``; a run of rectangles of one style is one matplotlib call
    (a Gantt chart of thousands of spans stays fast)."""
    run: list[Rect] = []
    for el in list(elements) + [None]:
        if run and not (isinstance(el, Rect) and _style(el) == _style(run[0])):
            _draw_rects(ax, run)
            run = []
        if isinstance(el, Rect):
            run.append(el)
        elif el is not None:
            draw_element(ax, el)


def _style(r: Rect) -> tuple:
    return (r.kind, r.color, r.edgecolor, r.linewidth, r.alpha) + ((r.y, r.height) if r.kind == "rect" else ())


def _draw_rects(ax, rects: list[Rect]) -> None:
    r = rects[0]
    label = next((q.label for q in rects if q.label), None)
    common = {"color": r.color, "alpha": r.alpha, "label": label}
    if r.kind == "bar":
        ax.bar([q.x for q in rects], [q.height for q in rects], width=[q.width for q in rects],
               bottom=[q.y for q in rects], align="edge", **common)
    elif r.kind == "barh":
        ax.barh([q.y for q in rects], [q.width for q in rects], height=[q.height for q in rects],
                left=[q.x for q in rects], align="edge", **common)
    else:
        ax.broken_barh([(q.x, q.width) for q in rects], (r.y, r.height), facecolors=r.color, edgecolor=r.edgecolor,
                       linewidth=r.linewidth, alpha=r.alpha, label=label)


def draw_element(ax, el) -> None:
    """Draw one model element on the matplotlib Axes ``ax``."""
    if isinstance(el, Rect):
        _draw_rects(ax, [el])
    elif isinstance(el, Line):
        ax.plot(el.xs, el.ys, color=el.color, linestyle=el.linestyle, linewidth=el.linewidth, marker=el.marker,
                markersize=el.markersize, label=el.label, drawstyle="steps-post" if el.where == "post" else "default")
    elif isinstance(el, Span):
        band = ax.axvspan if el.axis == "x" else ax.axhspan
        band(el.lo, el.hi, color=el.color, alpha=el.alpha, label=el.label)
    elif isinstance(el, RefLine):
        ref = ax.axvline if el.axis == "x" else ax.axhline
        ref(el.value, color=el.color, linestyle=el.linestyle, linewidth=el.linewidth, label=el.label)
    elif isinstance(el, Text):
        if el.annotate:
            ax.annotate(el.text, (el.x, el.y), textcoords="offset points", xytext=el.offset, fontsize=el.fontsize,
                        color=el.color)
        else:
            ax.text(el.x, el.y, el.text, ha=el.ha, va=el.va, fontsize=el.fontsize, color=el.color)
    elif isinstance(el, Box):
        stats = {"med": el.median, "q1": el.q1, "q3": el.q3, "whislo": el.whislo, "whishi": el.whishi,
                 "fliers": el.fliers}
        ax.bxp([stats], positions=[el.position], widths=el.width, orientation="horizontal" if el.horizontal
               else "vertical", boxprops={"color": el.color}, medianprops={"color": el.median_color},
               manage_ticks=False)
    else:
        raise TypeError(f"cannot draw {type(el).__name__}")


def draw_legend(ax, legend: Legend) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([], [], color=c, label=lbl) if kind == "line" else Patch(color=c, label=lbl)
               for kind, c, lbl in legend.entries]
    kwargs = {"loc": legend.loc, "fontsize": legend.fontsize, "frameon": legend.frameon}
    if legend.outside:
        kwargs.update(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    elif legend.above:
        kwargs.update(loc="lower left", bbox_to_anchor=(0.0, 1.0))
    ax.legend(handles=handles, **kwargs)


def draw_panel(ax, panel: Panel) -> None:
    """Everything ``panel`` holds, on ``ax``: elements, scales, limits, ticks, labels, legend."""
    draw_elements(ax, panel.elements)
    for axis, name in ((panel.x, "x"), (panel.y, "y")):
        if axis.scale == "log":
            getattr(ax, f"set_{name}scale")("log", base=axis.base)
        if axis.lim is not None:
            getattr(ax, f"set_{name}lim")(*axis.lim)
        if axis.ticks is not None:
            getattr(ax, f"set_{name}ticks")(axis.ticks, axis.ticklabels)
        elif axis.ticklabels is not None:
            getattr(ax, f"set_{name}ticklabels")(axis.ticklabels)
        if axis.label:
            getattr(ax, f"set_{name}label")(axis.label)
    if panel.y.inverted:
        ax.invert_yaxis()
    if panel.title:
        ax.set_title(panel.title, fontsize=panel.title_size)
    if panel.legend_box is not None:
        draw_legend(ax, panel.legend_box)
    if not panel.axis_on:
        ax.set_axis_off()


def render(fig: Figure):
    """A matplotlib Figure (Agg canvas, outside pyplot) showing the course Figure ``fig``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    out = MplFigure(figsize=tuple(fig.size), layout="constrained")
    FigureCanvasAgg(out)
    nrows, ncols = fig.grid
    if fig.panels:
        axes = out.subplots(nrows, ncols, squeeze=False, sharex=fig.sharex, sharey=fig.sharey,
                            gridspec_kw={"width_ratios": fig.width_ratios, "height_ratios": fig.height_ratios})
        for i, p in enumerate(fig.panels):
            draw_panel(axes[i // ncols][i % ncols], p)
    return out


def png(fig: Figure, dpi: int = 100) -> bytes:
    import io

    buf = io.BytesIO()
    render(fig).savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
