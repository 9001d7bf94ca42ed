"""Draw the course's figure model (``course.figure``) as SVG, standard library only: the browser edition's renderer.

Two steps: ``shapes(panel, xlim, ylim)`` turns a Panel's elements into plain shapes in data coordinates (rectangles,
polylines, markers, text), which is what ``tests/test_figure.py`` compares with what matplotlib draws; ``render``
lays the panels out on the figure's grid, maps data to pixels (linear or log axes, inverted y) and writes the SVG.
Text is measured by an average glyph width, so labels are placed approximately; the data are placed exactly.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from .figure_elements import Box, Line, Rect, RefLine, Span, Text

if TYPE_CHECKING:      # annotations only: course.figure imports this module
    from .figure import Figure, Panel

DPI = 100                      # pixels per inch, as matplotlib's inline figures
FONT = "DejaVu Sans, Noto Sans CJK SC, Arial, sans-serif"
DASHES = {"-": None, "--": "5.5,2.4", ":": "1.5,2.5", "-.": "9.6,2.4,1.5,2.4"}
TICK_PT = 9.0
ZORDER = {"rect": 1, "line": 2, "markers": 2, "text": 3}


def pt(size: float) -> float:
    """Points to pixels."""
    return size * DPI / 72


def text_width(s: str, size_pt: float) -> float:
    wide = sum(1 for ch in s if ord(ch) > 0x2E7F)    # CJK glyphs are about twice as wide
    return pt(size_pt) * (0.58 * (len(s) - wide) + 1.0 * wide)


# ---- shapes in data coordinates ----------------------------------------------------------------------------------
@dataclass
class Shape:
    kind: str          # 'rect' (x, y, w, h) | 'line' (points) | 'markers' (points) | 'text' (x, y, text)
    color: str
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    points: tuple = ()
    text: str = ""
    style: dict | None = None


def steps_post(xs, ys) -> list[tuple[float, float]]:
    """The vertices of a 'steps-post' curve: each value holds until the next x."""
    pts = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if i:
            pts.append((x, ys[i - 1]))
        pts.append((x, y))
    return pts


def box_shapes(b: Box) -> list[Shape]:
    """A box plot box as matplotlib's bxp draws it: the box outline, median, whiskers, caps, fliers."""
    half, cap = b.width / 2, b.width / 4

    def at(v, p):      # value along the data axis, p across it
        return (v, p) if b.horizontal else (p, v)

    c = b.position
    box = (at(b.q1, c - half), at(b.q1, c + half), at(b.q3, c + half), at(b.q3, c - half), at(b.q1, c - half))
    out = [Shape("line", b.color, points=box),
           Shape("line", b.median_color, points=(at(b.median, c - half), at(b.median, c + half))),
           Shape("line", "#000000", points=(at(b.q1, c), at(b.whislo, c))),
           Shape("line", "#000000", points=(at(b.q3, c), at(b.whishi, c))),
           Shape("line", "#000000", points=(at(b.whislo, c - cap), at(b.whislo, c + cap))),
           Shape("line", "#000000", points=(at(b.whishi, c - cap), at(b.whishi, c + cap)))]
    if b.fliers:
        out.append(Shape("markers", "#000000", points=tuple(at(v, c) for v in b.fliers), style={"marker": "o"}))
    return out


def shapes(panel: Panel, xlim: tuple[float, float], ylim: tuple[float, float]) -> list[Shape]:
    """Every element of ``panel`` as shapes in data coordinates (spans and reference lines cross the limits)."""
    out: list[Shape] = []
    for el in panel.elements:
        if isinstance(el, Line):
            pts = tuple(steps_post(el.xs, el.ys) if el.where == "post" else zip(el.xs, el.ys))
            if el.linestyle != "none":
                out.append(Shape("line", el.color, points=pts,
                                 style={"dash": el.linestyle, "width": el.linewidth}))
            if el.marker:
                out.append(Shape("markers", el.color, points=tuple(zip(el.xs, el.ys)),
                                 style={"marker": el.marker, "size": el.markersize}))
        elif isinstance(el, Rect):
            out.append(Shape("rect", el.color, el.x, el.y, el.width, el.height,
                             style={"edge": el.edgecolor, "edgewidth": el.linewidth, "alpha": el.alpha}))
        elif isinstance(el, Span):
            if el.axis == "x":
                out.append(Shape("rect", el.color, el.lo, ylim[0], el.hi - el.lo, ylim[1] - ylim[0],
                                 style={"alpha": el.alpha}))
            else:
                out.append(Shape("rect", el.color, xlim[0], el.lo, xlim[1] - xlim[0], el.hi - el.lo,
                                 style={"alpha": el.alpha}))
        elif isinstance(el, RefLine):
            pts = ((el.value, ylim[0]), (el.value, ylim[1])) if el.axis == "x" else ((xlim[0], el.value),
                                                                                      (xlim[1], el.value))
            out.append(Shape("line", el.color, points=pts, style={"dash": el.linestyle, "width": el.linewidth}))
        elif isinstance(el, Text):
            out.append(Shape("text", el.color, el.x, el.y, text=el.text,
                             style={"ha": el.ha, "va": el.va, "size": el.fontsize, "offset": el.offset}))
        elif isinstance(el, Box):
            out += box_shapes(el)
        else:
            raise TypeError(f"cannot draw {type(el).__name__}")
    return out


# ---- limits and ticks ---------------------------------------------------------------------------------------------
def extent(panel: Panel, axis: str) -> tuple[list[float], bool]:
    """The data values along ``axis`` ('x' or 'y') and whether bars start at 0 there (no margin below 0)."""
    vals, sticky = [], False
    for el in panel.elements:
        if isinstance(el, Line):
            vals += el.xs if axis == "x" else el.ys
        elif isinstance(el, Rect):
            lo, size = (el.x, el.width) if axis == "x" else (el.y, el.height)
            vals += [lo, lo + size]
            sticky = sticky or (el.kind == "bar" and axis == "y") or (el.kind == "barh" and axis == "x")
        elif isinstance(el, Span) and el.axis == axis:
            vals += [el.lo, el.hi]
        elif isinstance(el, RefLine) and el.axis == axis:
            vals.append(el.value)
        elif isinstance(el, Text):
            vals.append(el.x if axis == "x" else el.y)
        elif isinstance(el, Box):
            along = el.horizontal == (axis == "x")
            vals += ([el.whislo, el.whishi, *el.fliers] if along
                     else [el.position - el.width / 2, el.position + el.width / 2])
    return [v for v in vals if math.isfinite(v)], sticky


def auto_limits(vals: list[float], sticky: bool, log: bool) -> tuple[float, float]:
    if log:
        vals = [v for v in vals if v > 0]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        a, b = math.log(lo), math.log(hi)
        pad = (b - a) * 0.05 or 0.5
        return math.exp(a - pad), math.exp(b + pad)
    if hi == lo:
        return lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    return (lo if sticky and lo == 0 else lo - pad), (hi if sticky and hi == 0 else hi + pad)


def limits(fig_panels: list[Panel], p: Panel, axis: str, share: bool) -> tuple[float, float]:
    group = fig_panels if share else [p]
    vals, sticky = [], False
    for q in group:
        v, s = extent(q, axis)
        vals += v
        sticky = sticky or s
    ax = p.x if axis == "x" else p.y
    lo, hi = auto_limits(vals, sticky, ax.scale == "log")
    if ax.lim is not None:
        lo = lo if ax.lim[0] is None else ax.lim[0]
        hi = hi if ax.lim[1] is None else ax.lim[1]
    return lo, hi


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(k * mag for k in (1, 2, 2.5, 5, 10) if k * mag >= raw)
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi + step * 1e-9:
        ticks.append(round(k * step, 12))
        k += 1
    return ticks


def log_ticks(lo: float, hi: float, base: float) -> list[float]:
    a, b = math.ceil(math.log(lo, base) - 1e-9), math.floor(math.log(hi, base) + 1e-9)
    every = max(1, math.ceil((b - a + 1) / 8))
    ticks = [base ** k for k in range(a, b + 1, every)]
    if len(ticks) < 2:   # less than a decade: 1-2-5 steps within it
        ticks = [m * base ** k for k in range(a - 1, b + 1) for m in (1, 2, 5) if lo <= m * base ** k <= hi]
    return ticks


def tick_label(v: float) -> str:
    return f"{v:.6g}" if abs(v) >= 1e-12 else "0"


# ---- writing SVG ----------------------------------------------------------------------------------------------------
class Mapper:
    """Data -> pixel coordinates for one panel's plot area."""

    def __init__(self, p: Panel, box, xlim, ylim):
        self.x0, self.y0, self.w, self.h = box
        self.xlog, self.ylog = p.x.scale == "log", p.y.scale == "log"
        self.xlim, self.ylim, self.inv = xlim, ylim, p.y.inverted

    @staticmethod
    def _t(v, lim, log):
        if log:
            v = max(v, lim[0] * 1e-3) if v <= 0 else v
            return (math.log(v) - math.log(lim[0])) / ((math.log(lim[1]) - math.log(lim[0])) or 1)
        return (v - lim[0]) / ((lim[1] - lim[0]) or 1)

    def px(self, x: float) -> float:
        return self.x0 + self._t(x, self.xlim, self.xlog) * self.w

    def py(self, y: float) -> float:
        t = self._t(y, self.ylim, self.ylog)
        return self.y0 + (t if self.inv else 1 - t) * self.h


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _text(x, y, s, size_pt, color="#000000", anchor="start", baseline="auto", weight=None, rotate=None) -> str:
    extra = f' font-weight="{weight}"' if weight else ""
    if rotate is not None:
        extra += f' transform="rotate({rotate} {_num(x)} {_num(y)})"'
    return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(pt(size_pt))}" fill="{color}" '
            f'text-anchor="{anchor}" dominant-baseline="{baseline}"{extra}>{escape(s)}</text>')


def _marker(x, y, marker, size, color) -> str:
    r = pt(size) / 2
    if marker in ("o", "."):
        r = r if marker == "o" else r / 2
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" fill="{color}"/>'
    if marker == "*":
        pts = []
        for k in range(10):
            a = math.pi / 2 + k * math.pi / 5
            rr = r * 1.3 if k % 2 == 0 else r * 0.55
            pts.append(f"{_num(x + rr * math.cos(a))},{_num(y - rr * math.sin(a))}")
        return f'<polygon points="{" ".join(pts)}" fill="{color}"/>'
    return f'<rect x="{_num(x - r)}" y="{_num(y - r)}" width="{_num(2 * r)}" height="{_num(2 * r)}" fill="{color}"/>'


def legend_size(p: Panel) -> tuple[float, float]:
    lg = p.legend_box
    if lg is None or not lg.entries:
        return 0.0, 0.0
    line = pt(lg.fontsize) * 1.45
    width = max(text_width(label, lg.fontsize) for _, _, label in lg.entries) + pt(lg.fontsize) * 3
    return width, line * len(lg.entries) + 6


def draw_legend(p: Panel, box) -> list[str]:
    lg = p.legend_box
    w, h = legend_size(p)
    if not w:
        return []
    x0, y0, pw, ph = box
    if lg.outside:
        lx, ly = x0 + pw + 6, y0
    elif lg.above:
        lx, ly = x0, y0 - h - 4
    else:
        loc = "upper right" if lg.loc == "best" else lg.loc
        lx = x0 + 6 if "left" in loc else x0 + pw - w - 6 if "right" in loc else x0 + (pw - w) / 2
        ly = y0 + 6 if "upper" in loc else y0 + ph - h - 6 if "lower" in loc else y0 + (ph - h) / 2
    out = []
    if lg.frameon:
        out.append(f'<rect x="{_num(lx)}" y="{_num(ly)}" width="{_num(w)}" height="{_num(h)}" fill="#ffffff" '
                   f'fill-opacity="0.8" stroke="#cccccc"/>')
    line = pt(lg.fontsize) * 1.45
    sw = pt(lg.fontsize) * 1.6
    for i, (kind, color, label) in enumerate(lg.entries):
        cy = ly + 3 + line * (i + 0.5)
        if kind == "line":
            out.append(f'<line x1="{_num(lx + 4)}" y1="{_num(cy)}" x2="{_num(lx + 4 + sw)}" y2="{_num(cy)}" '
                       f'stroke="{color}" stroke-width="1.5"/>')
        else:
            out.append(f'<rect x="{_num(lx + 4)}" y="{_num(cy - line * 0.3)}" width="{_num(sw)}" '
                       f'height="{_num(line * 0.6)}" fill="{color}"/>')
        out.append(_text(lx + 8 + sw, cy, label, lg.fontsize, baseline="central"))
    return out


def draw_shape(s: Shape, m: Mapper) -> str:
    st = s.style or {}
    if s.kind == "rect":
        xa, xb = sorted((m.px(s.x), m.px(s.x + s.w)))
        ya, yb = sorted((m.py(s.y), m.py(s.y + s.h)))
        edge = st.get("edge", "none")
        stroke = f' stroke="{edge}" stroke-width="{_num(st.get("edgewidth", 0) * DPI / 72)}"' if edge != "none" else ""
        alpha = st.get("alpha", 1.0)
        op = f' fill-opacity="{alpha:g}"' if alpha != 1.0 else ""
        return (f'<rect x="{_num(xa)}" y="{_num(ya)}" width="{_num(xb - xa)}" height="{_num(yb - ya)}" '
                f'fill="{s.color}"{op}{stroke}/>')
    if s.kind == "line":
        pts = " ".join(f"{_num(m.px(x))},{_num(m.py(y))}" for x, y in s.points)
        dash = DASHES.get(st.get("dash", "-"))
        d = f' stroke-dasharray="{dash}"' if dash else ""
        return (f'<polyline points="{pts}" fill="none" stroke="{s.color}" '
                f'stroke-width="{_num(pt(st.get("width", 1.0)))}"{d} stroke-linejoin="round"/>')
    if s.kind == "markers":
        return "".join(_marker(m.px(x), m.py(y), st.get("marker", "o"), st.get("size", 6.0), s.color)
                       for x, y in s.points)
    if s.kind == "text":
        dx, dy = st.get("offset", (0.0, 0.0))
        anchor = {"left": "start", "center": "middle", "right": "end"}[st.get("ha", "left")]
        baseline = {"baseline": "auto", "center": "central", "bottom": "text-after-edge",
                    "top": "text-before-edge"}[st.get("va", "baseline")]
        return _text(m.px(s.x) + pt(dx), m.py(s.y) - pt(dy), s.text, st.get("size", 10.0), s.color, anchor,
                     baseline)
    raise TypeError(s.kind)


def panel_margins(p: Panel, xticks, yticks) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) pixels around the plot area for ticks, labels, title and legend."""
    if not p.axis_on:
        left = bottom = 6.0
    else:
        ylabels = p.y.ticklabels if p.y.ticklabels is not None else [tick_label(v) for v in yticks]
        left = 10 + max((text_width(s, TICK_PT) for s in ylabels), default=0) + (pt(11) if p.y.label else 0)
        bottom = 8 + pt(TICK_PT) * 1.4 + (pt(11) * 1.5 if p.x.label else 0)
    top = 8 + (pt(p.title_size) * 1.5 if p.title else 0)
    lw, lh = legend_size(p)
    right = 12 + (lw + 8 if p.legend_box is not None and p.legend_box.outside else 0)
    if p.legend_box is not None and p.legend_box.above:
        top += lh + 4
    return left, top, right, bottom


def axes_svg(p: Panel, m: Mapper, xticks, yticks) -> list[str]:
    out = []
    x0, y0, w, h = m.x0, m.y0, m.w, m.h
    if p.axis_on:
        out.append(f'<rect x="{_num(x0)}" y="{_num(y0)}" width="{_num(w)}" height="{_num(h)}" fill="none" '
                   f'stroke="#000000" stroke-width="0.8"/>')
        xlabels = p.x.ticklabels if p.x.ticklabels is not None else [tick_label(v) for v in xticks]
        for v, s in zip(xticks, xlabels):
            x = m.px(v)
            if x0 - 0.5 <= x <= x0 + w + 0.5:
                out.append(f'<line x1="{_num(x)}" y1="{_num(y0 + h)}" x2="{_num(x)}" y2="{_num(y0 + h + 4)}" '
                           f'stroke="#000000" stroke-width="0.8"/>')
                out.append(_text(x, y0 + h + 6, s, TICK_PT, anchor="middle", baseline="text-before-edge"))
        ylabels = p.y.ticklabels if p.y.ticklabels is not None else [tick_label(v) for v in yticks]
        for v, s in zip(yticks, ylabels):
            y = m.py(v)
            if y0 - 0.5 <= y <= y0 + h + 0.5:
                out.append(f'<line x1="{_num(x0 - 4)}" y1="{_num(y)}" x2="{_num(x0)}" y2="{_num(y)}" '
                           f'stroke="#000000" stroke-width="0.8"/>')
                out.append(_text(x0 - 6, y, s, TICK_PT, anchor="end", baseline="central"))
        if p.x.label:
            out.append(_text(x0 + w / 2, y0 + h + 8 + pt(TICK_PT) * 1.4, p.x.label, 10, anchor="middle",
                             baseline="text-before-edge"))
        if p.y.label:
            left = max((text_width(s, TICK_PT) for s in ylabels), default=0)
            out.append(_text(x0 - 10 - left, y0 + h / 2, p.y.label, 10, anchor="middle", baseline="text-after-edge",
                             rotate=-90))
    if p.title:
        top = y0 - 6 - (legend_size(p)[1] + 4 if p.legend_box is not None and p.legend_box.above else 0)
        out.append(_text(x0 + w / 2, top, p.title, p.title_size, anchor="middle", baseline="text-after-edge"))
    return out


def layout(fig: Figure) -> list[tuple[float, float, float, float]]:
    """Each panel's cell (x, y, w, h) in pixels on the figure's grid."""
    nrows, ncols = fig.grid
    W, H = fig.size[0] * DPI, fig.size[1] * DPI
    wr, hr = fig.width_ratios or [1] * ncols, fig.height_ratios or [1] * nrows
    xs = [sum(wr[:c]) / sum(wr) * W for c in range(ncols + 1)]
    ys = [sum(hr[:r]) / sum(hr) * H for r in range(nrows + 1)]
    return [(xs[i % ncols], ys[i // ncols], xs[i % ncols + 1] - xs[i % ncols], ys[i // ncols + 1] - ys[i // ncols])
            for i in range(len(fig.panels))]


def panel_limits(fig: Figure, p: Panel):
    return (limits(fig.panels, p, "x", fig.sharex), limits(fig.panels, p, "y", fig.sharey))


def render(fig: Figure) -> str:
    """The SVG document of ``fig``."""
    W, H = fig.size[0] * DPI, fig.size[1] * DPI
    body = []
    for i, (p, cell) in enumerate(zip(fig.panels, layout(fig))):
        xlim, ylim = panel_limits(fig, p)
        xticks = p.x.ticks if p.x.ticks is not None else (
            log_ticks(*xlim, p.x.base) if p.x.scale == "log" else nice_ticks(*xlim))
        yticks = p.y.ticks if p.y.ticks is not None else (
            log_ticks(*ylim, p.y.base) if p.y.scale == "log" else nice_ticks(*ylim))
        left, top, right, bottom = panel_margins(p, xticks, yticks)
        cx, cy, cw, ch = cell
        box = (cx + left, cy + top, max(10.0, cw - left - right), max(10.0, ch - top - bottom))
        m = Mapper(p, box, xlim, ylim)
        clip = f"__CLIP__{i}"
        body.append(f'<clipPath id="{clip}"><rect x="{_num(box[0])}" y="{_num(box[1])}" width="{_num(box[2])}" '
                    f'height="{_num(box[3])}"/></clipPath>')
        # matplotlib's stacking: patches under lines under text, each kind in the order drawn
        drawn = [draw_shape(s, m) for s in sorted(shapes(p, xlim, ylim), key=lambda s: ZORDER[s.kind])]
        body.append(f'<g clip-path="url(#{clip})">' + "".join(drawn) + "</g>")
        body += axes_svg(p, m, xticks, yticks)
        body += draw_legend(p, box)
    text = "\n".join(body)
    # clip ids must be unique on a page holding many figures and stable for one figure (widgets hash the SVG)
    ident = "c" + hashlib.sha1(text.encode()).hexdigest()[:10] + "-"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(W)}" height="{_num(H)}" '
            f'viewBox="0 0 {_num(W)} {_num(H)}" font-family="{FONT}">\n'
            f'<rect width="100%" height="100%" fill="#ffffff"/>\n{text.replace("__CLIP__", ident)}\n</svg>\n')
