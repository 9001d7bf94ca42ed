"""Figures: Gantt, memory, bubble curves and the ASCII timeline draw what the timeline says."""

import matplotlib

matplotlib.use("Agg")

from course.costs import Costs
from course.plots import COLORS, ascii_timeline, bubble_curves, compare, gantt, memory
from course.schedules import build
from course.sim import simulate


def test_gantt_draws_one_bar_per_span_in_the_kind_colour():
    tl = simulate(build("1f1b", 3, 4))
    ax = gantt(tl)
    bars = {}                                                          # colour -> (x, width) of each bar
    for coll in ax.collections:
        colour = matplotlib.colors.to_hex(coll.get_facecolor()[0])
        for path in coll.get_paths():
            xs = path.vertices[:, 0]
            bars.setdefault(colour, []).append((xs.min(), xs.max() - xs.min()))
    assert len(bars.pop("#e5e5e5")) == tl.p                            # the idle band behind each rank
    assert set(bars) == {COLORS["F"].lower(), COLORS["B"].lower()}
    assert sorted(x for b in bars.values() for x in b) == sorted(
        (sp.start, sp.end - sp.start) for rs in tl.spans for sp in rs)
    assert "bubble 33.3%" in ax.get_title()
    assert ax.get_xlabel() == "time (cost units)"


def test_memory_plot_and_compare():
    tl = simulate(build("gpipe", 2, 3))
    ax = memory(tl)
    assert len(ax.get_lines()) == 2 and "peak 3" in ax.get_legend().get_texts()[0].get_text()
    fig = compare([tl, simulate(build("1f1b", 2, 3))], memory_too=True)
    assert len(fig.axes) == 4


def test_bubble_curves_follow_the_formula():
    ax = bubble_curves(ps=(4,), ms=(4, 8, 16))
    (line,) = ax.get_lines()
    assert [round(y, 3) for y in line.get_ydata()] == [0.429, 0.273, 0.158]


def test_ascii_scales_float_durations():
    tl = simulate(build("1f1b", 2, 2), Costs(f=0.5, b=0.5, w=0.5))
    text = ascii_timeline(tl)
    assert text.splitlines()[:2] == ["rank 0 |01..aa.bb|", "rank 1 |.0aa1bb..|"]
    assert "1 char = 0.5 cost units" in text


def test_memory_has_no_spike_where_a_free_meets_an_allocation():
    tl = simulate(build("1f1b", 2, 4))          # rank 1 frees B_i and allocates F_{i+1} at the same instant
    times = [t for t, _ in tl.memory[1]]
    assert len(times) == len(set(times))
    assert max(level for _, level in tl.memory[1]) == tl.peak_activations[1] == 1
