"""The figure model and its two renderers draw the same data.

For every plot kind of ``course.plots`` and every raw drawing call the chapters make, the same drawing goes to a
real matplotlib Axes and to a course Panel; the rectangles, curve points, markers, reference lines and texts that
matplotlib holds (read back from its artists, in data coordinates) must equal the shapes the SVG renderer draws.
The raw calls go to matplotlib directly, so the model's reading of them (format strings, colour cycle, categorical
bars, box-plot statistics) is checked against matplotlib itself.
"""

from __future__ import annotations

import random
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import pytest
import stdlib_path
from matplotlib.colors import to_hex
from matplotlib.figure import Figure as MplFigure

from course import figure, plots, render_mpl, render_svg
from course.costs import Costs
from course.figure import Patch
from course.memory import PRESETS, ActivationConfig, pipeline_memory
from course.schedules import build
from course.sim import simulate

R = 6   # decimals compared


def _r(v) -> float:
    return round(float(v), R) + 0.0


def _pts(points) -> tuple:
    return tuple((_r(x), _r(y)) for x, y in points)


def mpl_primitives(ax) -> dict:
    """What a matplotlib Axes holds, in data coordinates."""
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Rectangle
    from matplotlib.text import Annotation

    out = {"rect": [], "line": [], "markers": [], "ref": [], "span": [], "text": []}
    for patch in ax.patches:
        assert isinstance(patch, Rectangle), type(patch)
        color = to_hex(patch.get_facecolor())
        if patch.get_transform().contains_branch(ax.transData):
            out["rect"].append((_r(patch.get_x()), _r(patch.get_y()), _r(patch.get_width()),
                                _r(patch.get_height()), color))
        else:   # axvspan / axhspan: data along one axis, the whole panel along the other
            vertical = patch.get_transform().contains_branch_seperately(ax.transData)[0]
            lo, size = (patch.get_x(), patch.get_width()) if vertical else (patch.get_y(), patch.get_height())
            out["span"].append(("x" if vertical else "y", _r(lo), _r(lo + size), color))
    for coll in ax.collections:
        assert isinstance(coll, PolyCollection), type(coll)
        faces = [to_hex(c) for c in coll.get_facecolor()]
        for i, path in enumerate(coll.get_paths()):
            xs, ys = path.vertices[:, 0], path.vertices[:, 1]
            out["rect"].append((_r(xs.min()), _r(ys.min()), _r(xs.max() - xs.min()), _r(ys.max() - ys.min()),
                                faces[i % len(faces)]))
    for line in ax.get_lines():
        color = to_hex(line.get_color())
        if not line.get_transform().contains_branch(ax.transData):     # axhline / axvline
            xs, ys = line.get_xdata(), line.get_ydata()
            out["ref"].append(("x", _r(xs[0]), color) if xs[0] == xs[-1] and ys[0] != ys[-1]
                              else ("y", _r(ys[0]), color))
            continue
        pts = [tuple(p) for p in line.get_xydata()]
        if not pts:                 # e.g. a box without fliers: nothing drawn
            continue
        if line.get_linestyle() not in ("None", "", " "):
            drawn = render_svg.steps_post(*zip(*pts)) if line.get_drawstyle() == "steps-post" else pts
            out["line"].append((_pts(drawn), color))
        if line.get_marker() not in ("None", "", " ", None):
            mcolor = to_hex(line.get_markeredgecolor()) if line.get_linestyle() in ("None", "") else color
            out["markers"].append((_pts(pts), mcolor))
    for t in ax.texts:
        x, y = t.xy if isinstance(t, Annotation) else t.get_position()
        out["text"].append((_r(x), _r(y), t.get_text()))
    legend = ax.get_legend()
    out["legend"] = [t.get_text() for t in legend.get_texts()] if legend else []
    out["labels"] = (ax.get_title(), ax.get_xlabel(), ax.get_ylabel())
    return {k: sorted(v) if k not in ("legend", "labels") else v for k, v in out.items()}


def svg_primitives(fig: figure.Figure, p: figure.Panel) -> dict:
    """What the SVG renderer draws for panel ``p``, in data coordinates."""
    xlim, ylim = render_svg.panel_limits(fig, p)
    out = {"rect": [], "line": [], "markers": [], "ref": [], "span": [], "text": []}
    spans = {(el.axis, el.lo, el.hi) for el in p.elements if isinstance(el, figure.Span)}
    refs = [el for el in p.elements if isinstance(el, figure.RefLine)]
    for el in refs:
        out["ref"].append((el.axis, _r(el.value), el.color))
    ref_pts = {_pts(((el.value, ylim[0]), (el.value, ylim[1])) if el.axis == "x" else
                    ((xlim[0], el.value), (xlim[1], el.value))) for el in refs}
    for s in render_svg.shapes(p, xlim, ylim):
        if s.kind == "rect":
            span = next((sp for sp in spans if (sp[0] == "x" and s.x == sp[1] and s.w == sp[2] - sp[1])
                         or (sp[0] == "y" and s.y == sp[1] and s.h == sp[2] - sp[1])), None)
            if span:
                out["span"].append((span[0], _r(span[1]), _r(span[2]), s.color))
            else:
                out["rect"].append((_r(s.x), _r(s.y), _r(s.w), _r(s.h), s.color))
        elif s.kind == "line":
            if _pts(s.points) not in ref_pts:
                out["line"].append((_pts(s.points), s.color))
        elif s.kind == "markers":
            out["markers"].append((_pts(s.points), s.color))
        else:
            out["text"].append((_r(s.x), _r(s.y), s.text))
    out = {k: sorted(v) for k, v in out.items()}
    out["legend"] = [label for _, _, label in p.legend_box.entries] if p.legend_box else []
    out["labels"] = (p.title, p.x.label, p.y.label)
    return out


def tl(name="1f1b", p=4, m=8, **kw):
    return simulate(build(name, p, m, **kw.pop("build", {})), Costs(**kw) if kw else None)


PM = pipeline_memory(build("1f1b", 4, 8), PRESETS["llama3-8b"], ActivationConfig(seq=4096, mbs=1, tp=1))
_rng = random.Random(7)
BOX = [[_rng.gauss(0, 1) * 10 + s for _ in range(40)] + [60.0 + s] for s in range(3)]   # one flier each


def raw_chapter_calls(ax):
    """The matplotlib calls the chapters make themselves (grep course/chapters/_src for each)."""
    ax.semilogx([1, 2, 4, 8, 16], [1.0, 2.5, 4.0, 4.5, 4.2], "o-", base=2)
    ax.plot([4], [4.0], "r*", markersize=12)
    ax.plot([1, 2, 3], [2, 3, 1], "o-", label="series")
    ax.axhline(2.0, color="grey", ls="--", label="steady state")
    ax.set_xlabel("m")
    ax.set_ylabel("time")
    ax.set_title("raw", fontsize=10)
    ax.legend()


def raw_bars(ax):
    ax.bar(["TP", "PP", "DP"], [3.0, 0.5, 1.2], color=["#C44E52", "#4C72B0", "#55A868"])
    ax.bar([0.2, 1.2], [1.0, 2.0], 0.4, label="greedy")
    for i, v in enumerate([3.0, 0.5, 1.2]):
        ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(range(3), ["stage 0", "stage 1", "stage 2"])
    ax.legend(handles=[Patch(color="#4C72B0", label="F"), Patch(color="#55A868", label="B")], fontsize=8)


def raw_barh(ax):
    ax.barh(["bubble", "state"], [0.2, 0.7], color=["#8C8C8C", "#DD8452"])
    ax.set_xlim(0, 1.15)


def raw_boxes(ax):
    ax.boxplot(BOX, positions=[1.3, 3.3, 5.3], orientation="horizontal", whis=(0, 100), widths=0.6)
    ax.boxplot(BOX, positions=[0.7, 2.7, 4.7], orientation="horizontal", widths=0.6, boxprops={"color": "#C44E52"})
    ax.set_yticks([1, 3, 5], ["a", "b", "c"])
    ax.axvspan(15, 30, color="#55A868", alpha=0.2, label="claim")
    ax.axvline(0, color="grey", lw=0.8)
    ax.legend(loc="lower right", fontsize=8)


def raw_phases(ax):
    colors = figure.TAB10
    ax.broken_barh([(0, 1), (1, 2), (3, 1)], (-0.4, 0.8), facecolors=[colors[k] for k in (0, 1, 2)],
                   edgecolor="white", linewidth=0.3)
    ax.broken_barh([(0.5, 2)], (0.6, 0.8), facecolors="#4C72B0")
    ax.set_yticks(range(2), ["rank 0", "rank 1"])
    ax.invert_yaxis()
    ax.legend(handles=[Patch(color=colors[k], label=f"phase {k}") for k in range(3)], loc="upper left",
              bbox_to_anchor=(1.0, 1.0), frameon=False)


DRAWINGS = {
    "gantt": lambda ax: plots.gantt(tl(), ax=ax),
    "gantt interleaved, no labels": lambda ax: plots.gantt(tl("interleaved", 4, 8, build={"v": 2}), ax=ax,
                                                            labels=False, title="x"),
    "gantt zb-h1 uneven": lambda ax: plots.gantt(tl("zb-h1", 4, 8, f=1, b=1.5, w=0.5), ax=ax),
    "gantt dualpipe": lambda ax: plots.gantt(tl("dualpipe", 4, 8), ax=ax),
    "memory": lambda ax: plots.memory(tl("gpipe", 3, 5), ax=ax),
    "memory in bytes": lambda ax: plots.memory(PM.timeline, ax=ax, curves=PM.curves(), gpu_mem=80e9),
    "memory bars": lambda ax: plots.memory_bars(PM.ranks, ax=ax, gpu_mem=20e9, title="bars"),
    "bubble curves": lambda ax: plots.bubble_curves(ps=(2, 4), ms=range(1, 17), ax=ax, highlight=(4, 8)),
    "raw lines": raw_chapter_calls,
    "raw bars": raw_bars,
    "raw barh": raw_barh,
    "raw box plots": raw_boxes,
    "raw phases": raw_phases,
}


@pytest.mark.parametrize("name", DRAWINGS)
def test_both_renderers_draw_the_same_data(name):
    draw = DRAWINGS[name]
    mfig = MplFigure()
    max_ = mfig.add_subplot()
    draw(max_)
    fig = figure.Figure()
    panel = fig.add_subplot()
    draw(panel)
    got, want = svg_primitives(fig, panel), mpl_primitives(max_)
    assert any(want[k] for k in ("rect", "line", "markers", "span")), f"{name}: matplotlib drew nothing"
    for key in want:
        assert got[key] == want[key], f"{name}: {key} differ\nsvg: {got[key]}\nmpl: {want[key]}"
    # the model rendered by matplotlib (render_mpl) draws what the SVG renderer draws, too
    replayed = mpl_primitives(render_mpl.render(fig).axes[0])
    assert replayed == want, name


def test_compare_lays_out_a_grid_in_both_backends():
    tls = [tl("gpipe", 2, 3), tl("1f1b", 2, 3)]
    course_fig = figure.Figure()
    course_fig.subplots(2, 2, squeeze=False, gridspec_kw={"height_ratios": [1, 2]})
    mfig = render_mpl.render(course_fig)
    assert len(mfig.axes) == 4
    # compare() with the SVG backend: a course Figure of 4 panels whose shapes match matplotlib's compare()
    mpl_version = plots.compare(tls, memory_too=True)
    figure.BACKEND, old = "svg", figure.BACKEND
    try:
        svg_version = plots.compare(tls, memory_too=True)
    finally:
        figure.BACKEND = old
    assert isinstance(svg_version, figure.Figure) and len(svg_version.axes) == 4
    for mp, sp in zip(mpl_version.axes, svg_version.axes):
        got, want = svg_primitives(svg_version, sp), mpl_primitives(mp)
        assert {k: got[k] for k in ("rect", "line", "text")} == {k: want[k] for k in ("rect", "line", "text")}
    ET.fromstring(svg_version.svg())     # well-formed


def test_svg_is_well_formed_and_shows_every_span():
    t = tl()
    fig = figure.Figure((9, 3))
    plots.gantt(t, ax=fig.add_subplot())
    svg = fig.svg()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    spans = sum(len(rs) for rs in t.spans)
    rects = [r for r in root.iter(f"{ns}rect") if r.get("fill") in {plots.COLORS["F"].lower(),
                                                                        plots.COLORS["B"].lower()}]
    assert len(rects) >= spans                       # every span, plus the legend's swatches
    assert "bubble 27.3%" in svg and "rank 3" in svg
    assert fig.svg() == svg                          # deterministic: widgets compare drawings by their hash


def test_box_stats_match_matplotlib():
    from matplotlib.cbook import boxplot_stats

    rng = random.Random(3)
    for _ in range(30):
        data = [rng.lognormvariate(0, 1) for _ in range(rng.randint(1, 40))]
        for whis in (1.5, (0, 100), (5, 95)):
            want = boxplot_stats(data, whis=whis)[0]
            got = figure.box_stats(data, whis)
            for k in ("q1", "med", "q3", "whislo", "whishi"):
                assert got[k] == pytest.approx(float(want[k]), rel=1e-12, abs=1e-12), (k, whis)
            assert sorted(got["fliers"]) == pytest.approx(sorted(float(v) for v in want["fliers"]))


def test_bad_drawing_input_is_refused_clearly():
    p = figure.Figure().add_subplot()
    with pytest.raises(ValueError, match="3 x values but 2 y values"):
        p.plot([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="unsupported character"):
        p.plot([1], [1], "q")
    with pytest.raises(ValueError, match="colour"):
        p.axhline(1, color="chartreuse-ish")
    fig = figure.Figure()
    fig.subplots(1, 2)
    with pytest.raises(ValueError, match="already has panels"):
        fig.subplots(2, 1)


def test_svg_backend_is_chosen_without_matplotlib():
    code = ("from course import figure, plots\nfrom course.sim import simulate\nfrom course.schedules import build\n"
            "fig, ax = figure.subplots(figsize=(4, 2))\nplots.gantt(simulate(build('1f1b', 2, 2)), ax=ax)\n"
            "print(figure.BACKEND, type(fig).__name__, len(fig.svg()) > 1000)")
    out = stdlib_path.run(code)
    assert out.stdout.split() == ["svg", "Figure", "True"], out.stderr
    bad = subprocess.run([sys.executable, "-c", "import course.figure"], capture_output=True, text=True,
                         timeout=60, env={"COURSE_FIGURES": "png", "PATH": ""})
    assert bad.returncode != 0 and "COURSE_FIGURES='png'" in bad.stderr


WIDGET_CHECK = """
from course import plots, widgets
from course.costs import Costs
from course.schedules import build
from course.sim import simulate

def draw(fig, p, m, backward, ignored):
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.6])
    if m > 15:
        raise ValueError("m too large for this drawing")
    plots.bubble_curves(ps=(2, 4), ms=range(1, 17), ax=left, highlight=(p, m))
    plots.gantt(simulate(build("1f1b", p, m), Costs(f=1.0, b=backward, w=0.0)), ax=right)

widgets.explore(draw, name="svg", p=(2, 6, 4), m=(1, 16, 8), backward=(0.5, 4.0, 2.0, 0.5), ignored=["a", "b"])
ex = widgets.REGISTRY["svg"]
print(ex.mime, ex.image.startswith(b"<svg"), ex.renders)
for problem in widgets.check_all()["svg"]:
    print("PROBLEM", problem.splitlines()[0])
"""


def test_widgets_redraw_svg_without_numpy_and_matplotlib():
    """The browser edition's widgets: SVG drawings, and check_all still finds a failing move and a dead control."""
    out = stdlib_path.run(WIDGET_CHECK)
    lines = out.stdout.splitlines()      # outside a kernel the Output widget prints its displays too
    assert any(ln.split()[:2] == ["image/svg+xml", "True"] for ln in lines), out.stdout + out.stderr
    problems = [ln for ln in lines if ln.startswith("PROBLEM")]
    assert any("m=16 failed" in p for p in problems), lines
    assert any("moving ignored" in p for p in problems), lines
    assert len(problems) == 2, lines
