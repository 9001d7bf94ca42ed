"""Memory figures in GB: curves over time against a GPU line, stacked per-rank bars, and the memory widget."""

import matplotlib
import pytest

matplotlib.use("Agg")

from course.memory import PRESETS, ActivationConfig, pipeline_memory
from course.plots import memory, memory_bars
from course.schedules import build


def _pm():
    return pipeline_memory(build("1f1b", 4, 8), PRESETS["llama3-70b"], ActivationConfig(8192, 1, 8, True, "none"))


def test_memory_curves_in_gb_with_a_gpu_line():
    pm = _pm()
    ax = memory(pm.timeline, curves=pm.curves(), gpu_mem=80e9)
    assert ax.get_ylabel() == "GB held"
    lines = ax.get_lines()
    steps, gpu = lines[:-1], lines[-1]
    assert list(gpu.get_ydata()) == [80.0, 80.0]
    for r, line in enumerate(steps):
        assert abs(max(line.get_ydata()) * 1e9 - pm.ranks[r].total) < 1
        assert f"peak {pm.ranks[r].total / 1e9:.1f} GB" in line.get_label()


def test_memory_bars_stack_the_parts_and_mark_oom():
    pm = _pm()
    ax = memory_bars(pm.ranks, gpu_mem=80e9)
    tops = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    assert [round(tops[r] * 1e9) for r in range(4)] == [r.total for r in pm.ranks]
    ooms = [t for t in ax.texts if t.get_text() == "OOM"]
    assert len(ooms) == sum(r.total > 80e9 for r in pm.ranks) > 0


@pytest.mark.slow        # redraws the widget once per value of every control
def test_memory_widget_reacts_to_every_control():
    from course import widgets

    widgets.memory_explorer(name="test_memory_gb")
    ex = widgets.REGISTRY.pop("test_memory_gb")
    assert set(ex.controls) == {"p", "m", "recompute", "tp"}
    assert ex.check() == []
