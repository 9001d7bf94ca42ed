"""The plain data a figure is made of: colours, format strings, and the elements a Panel holds (line series,
rectangles, spans, reference lines, text, box plots, legend entries, axes).  ``course.figure`` builds them; the
two renderers (``course.render_mpl``, ``course.render_svg``) draw them.  Standard library only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# matplotlib's default colour cycle ("tab10"): the model fills in the colour a series would get there.
TAB10 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf")
NAMED = {"black": "#000000", "k": "#000000", "white": "#ffffff", "w": "#ffffff", "grey": "#808080",
         "gray": "#808080", "red": "#ff0000", "r": "#ff0000", "blue": "#0000ff", "b": "#0000ff", "green": "#008000",
         "g": "#008000", "orange": "#ffa500", "none": "none"}


def color_hex(color: Any, default: str = TAB10[0]) -> str:
    """'#rrggbb' (or 'none') for a colour given as hex, a short or CSS name, 'C3', or an RGB(A) tuple of floats."""
    if color is None:
        return default
    if isinstance(color, (tuple, list)):
        return "#" + "".join(f"{round(max(0.0, min(1.0, float(c))) * 255):02x}" for c in color[:3])
    text = str(color).strip().lower()
    if text.startswith("#") and len(text) in (4, 7):
        return text if len(text) == 7 else "#" + "".join(c * 2 for c in text[1:])
    if len(text) == 2 and text[0] == "c" and text[1].isdigit():
        return TAB10[int(text[1])]
    if text in NAMED:
        return NAMED[text]
    raise ValueError(f"colour {color!r}: use '#rrggbb', 'C0'..'C9', an RGB tuple or one of {', '.join(NAMED)}")


def parse_fmt(fmt: str | None) -> tuple[str | None, str | None, str | None]:
    """matplotlib's format string ('o-', 'r*', 'ko', '--') -> (colour, marker, linestyle)."""
    color = marker = style = None
    if not fmt:
        return color, marker, style
    rest = fmt
    for ls in ("--", "-.", "-", ":"):
        if ls in rest:
            style, rest = ls, rest.replace(ls, "", 1)
            break
    for ch in rest:
        if ch in "o*s^vx.+D":
            marker = ch
        elif ch in "krgbcmyw":
            color = {"c": "#00bfbf", "m": "#bf00bf", "y": "#bfbf00"}.get(ch) or NAMED[ch]
        else:
            raise ValueError(f"format {fmt!r}: unsupported character {ch!r}")
    if style is None and marker is None:
        style = "-"
    return color, marker, "none" if style is None else style


# ---- the elements a Panel holds --------------------------------------------------------------------------------
@dataclass
class Line:
    xs: list[float]
    ys: list[float]
    color: str
    linestyle: str = "-"          # '-', '--', ':', '-.', 'none'
    linewidth: float = 1.5
    marker: str | None = None
    markersize: float = 6.0
    where: str | None = None      # 'post': a step curve (the value holds until the next point)
    label: str | None = None


@dataclass
class Rect:
    """A filled rectangle in data coordinates: bars (vertical or horizontal) and broken_barh pieces."""
    x: float
    y: float
    width: float
    height: float
    color: str
    edgecolor: str = "none"
    linewidth: float = 0.0
    alpha: float = 1.0
    label: str | None = None
    kind: str = "rect"            # 'bar' | 'barh' | 'rect': what matplotlib draws it as


@dataclass
class Span:
    """axvspan / axhspan: a band across the whole panel."""
    axis: str                     # 'x': between two x values, full height
    lo: float
    hi: float
    color: str
    alpha: float = 1.0
    label: str | None = None


@dataclass
class RefLine:
    """axhline / axvline: a line across the whole panel."""
    axis: str                     # 'y': horizontal, at y=value
    value: float
    color: str
    linestyle: str = "-"
    linewidth: float = 1.0
    label: str | None = None


@dataclass
class Text:
    x: float
    y: float
    text: str
    ha: str = "left"
    va: str = "baseline"
    fontsize: float = 10.0
    color: str = "#000000"
    offset: tuple[float, float] = (0.0, 0.0)   # points, as annotate(..., textcoords="offset points")
    annotate: bool = False


@dataclass
class Box:
    """One box of a box plot, its statistics computed as matplotlib computes them."""
    position: float
    q1: float
    median: float
    q3: float
    whislo: float
    whishi: float
    fliers: list[float]
    width: float
    horizontal: bool
    color: str = "#000000"
    median_color: str = "#ff7f0e"


@dataclass
class Swatch:
    """A legend entry without a series (the SVG backend's ``Patch``)."""
    color: str
    label: str

    def __post_init__(self):
        self.color = color_hex(self.color)

    def get_label(self) -> str:
        return self.label

    def get_facecolor(self) -> str:
        return self.color


@dataclass
class Legend:
    entries: list[tuple[str, str, str]]     # (kind 'patch'|'line', colour, label)
    loc: str = "best"
    outside: bool = False                   # bbox_to_anchor=(1, 1): to the right of the panel
    above: bool = False                     # bbox_to_anchor=(0, 1) with loc 'lower left': above the panel
    fontsize: float = 10.0
    frameon: bool = True


@dataclass
class Axis:
    label: str = ""
    scale: str = "linear"                   # 'linear' | 'log'
    base: float = 10.0
    lim: tuple[float, float] | None = None
    ticks: list[float] | None = None
    ticklabels: list[str] | None = None
    inverted: bool = False


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's and matplotlib's default)."""
    n = len(sorted_values)
    pos = (n - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def box_stats(values: Sequence[float], whis: float | tuple[float, float] = 1.5) -> dict:
    """matplotlib.cbook.boxplot_stats for one data set: quartiles, whisker ends and fliers."""
    data = sorted(float(v) for v in values)
    if not data:
        raise ValueError("boxplot: a data set is empty")
    q1, med, q3 = (quantile(data, q) for q in (0.25, 0.5, 0.75))
    if isinstance(whis, (tuple, list)):
        lo_lim, hi_lim = quantile(data, whis[0] / 100), quantile(data, whis[1] / 100)
    else:
        iqr = q3 - q1
        lo_lim, hi_lim = q1 - whis * iqr, q3 + whis * iqr
    inside = [v for v in data if lo_lim <= v <= hi_lim]
    whislo = min(inside) if inside else q1
    whishi = max(inside) if inside else q3
    return {"q1": q1, "med": med, "q3": q3, "whislo": min(whislo, q1), "whishi": max(whishi, q3),
            "fliers": [v for v in data if v < whislo or v > whishi]}
