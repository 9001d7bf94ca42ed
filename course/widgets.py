"""One convention for every chapter's widgets, so that a headless test can prove they work.

A chapter writes a function that draws into a Figure and hands it to ``explore`` with simple control specs::

    def draw(fig, p, m, schedule):
        ax = fig.add_subplot()
        plots.gantt(simulate(build(schedule, p, m)), ax=ax)

    explore(draw, p=(2, 8, 4), m=(1, 32, 8), schedule=["1f1b", "gpipe"])

Specs: ``(min, max, value[, step])`` of ints -> IntSlider, with any float -> FloatSlider; a list (of anything)
or a tuple of strings -> Dropdown (first entry is the default); a bool -> Checkbox; an ipywidgets ValueWidget is
used as is.

``explore`` displays the controls above an Output that shows the figure, and records the explorer in
``REGISTRY``.  ``check_all()`` (run by tests/test_chapters.py in the executed kernel) moves every control of
every explorer away from its default through the real widget (so the ``interactive_output`` wiring is what
runs) and reports exceptions (which ``interactive_output`` would only print into the Output) and controls
whose move left the rendered image unchanged.

``draw`` must depend on its arguments only (the check compares images) and should redraw in well under a
second: every control move redraws.  Library plot functions take an Axes: ``plots.gantt(tl, ax=fig.add_subplot())``.

The figure comes from ``course.figure.new_figure``: with matplotlib, a plain ``matplotlib.figure.Figure`` on an Agg
canvas (not a pyplot figure: nothing else shows it, it never piles up in pyplot's figure list, and its pixels can
be hashed), shown as PNG; without it (the browser edition), a course Figure with the same ``subplots`` /
``add_subplot`` calls, shown as SVG and hashed as SVG text.  The first image also goes into the widget's display
bundle (``image/png`` or ``image/svg+xml``), so a static rendering (``python -m course.book``) shows it.
Neither numpy nor matplotlib is imported here unless the matplotlib backend draws.
"""

from __future__ import annotations

import base64
import hashlib
import io
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W
from IPython.display import SVG, Image, display

from . import figure as figures
from .validation import is_number

REGISTRY: dict[str, Explorer] = {}   # by name: re-running a cell replaces its explorer


def control(name: str, spec: Any) -> W.ValueWidget:
    """Build one ipywidgets control from a simple spec (see the module docstring)."""
    style = {"description_width": "initial"}
    if isinstance(spec, W.ValueWidget):
        return spec
    if isinstance(spec, bool):
        return W.Checkbox(value=spec, description=name, style=style)
    choices = isinstance(spec, list) or (isinstance(spec, tuple) and all(isinstance(x, str) for x in spec))
    if choices and spec:
        return W.Dropdown(options=list(spec), value=spec[0], description=name, style=style)
    if isinstance(spec, tuple) and len(spec) in (3, 4) and all(is_number(x) for x in spec):
        lo, hi, value = spec[:3]
        if not lo <= value <= hi:
            raise ValueError(f"control {name}: default {value} lies outside [{lo}, {hi}]")
        if all(isinstance(x, int) for x in spec):
            step = spec[3] if len(spec) == 4 else 1
            return W.IntSlider(value=value, min=lo, max=hi, step=step, description=name, style=style,
                               continuous_update=False)
        step = spec[3] if len(spec) == 4 else (hi - lo) / 20
        return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=name, style=style,
                             continuous_update=False)
    raise ValueError(f"control {name}: unsupported spec {spec!r}; use (min, max, value[, step]) for a slider, "
                     f"a list for a dropdown, a bool for a checkbox, or an ipywidgets control")


@dataclass
class Explorer:
    """A drawing function, its controls, its figure, and what the last redraw produced."""

    name: str
    draw: Callable[..., Any]
    controls: dict[str, W.ValueWidget]
    figure: Any                # a matplotlib Figure (Agg canvas) or a course.figure.Figure
    output: W.Output | None = None
    image: bytes = b""         # the last drawing: PNG bytes, or SVG text encoded as UTF-8
    mime: str = "image/png"
    digest: str = ""
    error: str | None = None   # traceback of the last redraw, None when it succeeded
    renders: int = 0
    _box: W.Widget | None = field(default=None, repr=False)

    @property
    def values(self) -> dict[str, Any]:
        return {k: c.value for k, c in self.controls.items()}

    def redraw(self, **values) -> None:
        """Clear the figure, draw it for ``values``, keep its hash and image (or the traceback)."""
        self.renders += 1
        self.figure.clear()
        try:
            self.draw(self.figure, **values)
            self.mime, self.image, self.digest = _render(self.figure)
        except Exception:
            self.error = traceback.format_exc()
            raise
        self.error = None

    def show_image(self) -> None:
        display(SVG(data=self.image.decode()) if self.mime == "image/svg+xml" else Image(data=self.image))

    def alternatives(self, name: str) -> list[Any]:
        """Non-default values to try for control ``name``: a slider's ends first (where range errors hide), then
        one step either way; the other dropdown entries; the other checkbox state."""
        c = self.controls[name]
        if isinstance(c, W.Checkbox):
            return [not c.value]
        if hasattr(c, "_options_values"):   # Dropdown and the other selection widgets
            return [v for v in c._options_values if v != c.value]
        if hasattr(c, "min") and hasattr(c, "max"):
            step = getattr(c, "step", None) or (c.max - c.min) / 20
            out = []
            for v in (c.max, c.min, c.value + step, c.value - step):
                v = min(max(v, c.min), c.max)
                if v != c.value and v not in out:
                    out.append(v)
            return out
        raise ValueError(f"{self.name}: cannot choose test values for control {name} ({type(c).__name__})")

    def check(self) -> list[str]:
        """Move each control off its default through the real widget; return the problems found (empty: fine).

        Drawing the same values again must give the same image (the comparisons rely on it).  Then each control
        in turn, the others at their defaults, must reach a value that redraws without error into a different
        image; dropdowns try every entry, so each must draw without error.  The control then goes back.
        """
        if self.error:
            return [f"{self.name}: the first drawing failed:\n{self.error}"]
        base = self.digest
        self.redraw(**self.values)
        if self.digest != base:
            return [f"{self.name}: drawing the same values twice gave different images; draw must depend on "
                    f"its arguments only"]
        problems = []
        for name, c in self.controls.items():
            default, tried, changed, failed = c.value, [], False, False
            every = hasattr(c, "_options_values")
            for value in self.alternatives(name):
                tried.append(value)
                c.value = value   # fires interactive_output's observer -> show -> redraw
                if self.error:
                    problems.append(f"{self.name}: {name}={value!r} failed:\n{self.error}")
                    failed = True
                    break
                changed = changed or self.digest != base
                if changed and not every:
                    break
            c.value = default
            if not changed and not failed:
                problems.append(f"{self.name}: moving {name} from {default!r} to {tried} left the figure unchanged")
        return problems

    def display(self) -> None:
        """Show controls and figure; the bundle also carries the first image for static renderings."""
        data = self._box._repr_mimebundle_()
        data = dict(data[0] if isinstance(data, tuple) else data)
        data[self.mime] = (self.image.decode() if self.mime == "image/svg+xml"
                           else base64.b64encode(self.image).decode())
        display(data, raw=True)


def _render(fig) -> tuple[str, bytes, str]:
    """(mime type, image, hash of what was drawn) for a freshly drawn figure of either backend."""
    if isinstance(fig, figures.Figure):
        svg = fig.svg().encode()
        return "image/svg+xml", svg, hashlib.sha1(svg).hexdigest()
    import numpy as np  # the matplotlib backend: matplotlib brings numpy
    from matplotlib.image import imsave

    fig.canvas.draw()
    pixels = np.asarray(fig.canvas.buffer_rgba())
    buf = io.BytesIO()
    imsave(buf, pixels, format="png")   # encodes the pixels just drawn (savefig would draw again)
    return "image/png", buf.getvalue(), hashlib.sha1(pixels.tobytes()).hexdigest()


def explore(draw: Callable[..., Any], *, name: str | None = None, figsize: tuple[float, float] = (9, 3.5),
            **specs: Any) -> None:
    """Show controls for ``specs`` and a figure that ``draw(fig, **values)`` redraws when they change.

    ``name`` (default: the function's name) must be unique within a chapter; the Explorer is kept in
    ``REGISTRY[name]``; nothing is returned, so a cell ending in ``explore(...)`` shows it once.
    Exceptions in ``draw`` print into the Output and are kept in ``Explorer.error``; in the first drawing
    they fail the cell.
    """
    if not specs:
        raise ValueError("explore needs at least one control, e.g. explore(draw, m=(1, 32, 8))")
    controls = {k: control(k, v) for k, v in specs.items()}
    ex = Explorer(name or getattr(draw, "__name__", "explorer"), draw, controls, figures.new_figure(figsize))

    def show(**values):   # runs inside interactive_output's Output, which it cleared
        try:
            ex.redraw(**values)
        except Exception:  # noqa: BLE001  (the learner's draw can raise anything)
            print(ex.error)   # interactive_output would swallow it; ex.error keeps it for the test
        else:
            ex.show_image()

    ex.output = W.interactive_output(show, controls)   # draws once now
    if ex.error:
        raise RuntimeError(f"explorer {ex.name}: drawing with the default values failed:\n{ex.error}")
    ex._box = W.VBox([W.HBox(list(controls.values()), layout=W.Layout(flex_flow="row wrap")), ex.output])
    REGISTRY[ex.name] = ex
    ex.display()


def memory_explorer(model: str = "llama3-70b", seq: int = 8192, gpu_mem: float = 80e9, schedule: str = "1f1b",
                    name: str = "memory_gb") -> None:
    """A learner moves p, m, recompute and TP and watches each rank's GB (bars: weights, gradients, optimizer,
    activation peak; curves: bytes over the step) against the GPU's capacity.  SP is on whenever TP is."""
    from . import plots
    from .memory import ActivationConfig, pipeline_memory, preset
    from .schedules import build

    shape = preset(model)

    def draw(fig, p, m, recompute, tp):
        cfg = ActivationConfig(seq, 1, tp, tp > 1, recompute)
        pm = pipeline_memory(build(schedule, p, m), shape, cfg)
        bars, curves = fig.subplots(1, 2, width_ratios=[1, 2])
        plots.memory_bars(pm.ranks, ax=bars, gpu_mem=gpu_mem,
                          title=f"{model}, {schedule} p={p} m={m}, tp={tp}, recompute {recompute}")
        plots.memory(pm.timeline, ax=curves, curves=pm.curves(), gpu_mem=gpu_mem, title="GB held over the step")

    explore(draw, name=name, figsize=(11, 3.8), p=(2, 16, 8), m=(1, 64, 16),
            recompute=["selective", "none", "full"], tp=[8, 4, 2, 1])


def check_all() -> dict[str, list[str]]:
    """Run ``Explorer.check`` on every registered explorer: {name: problems}."""
    return {name: ex.check() for name, ex in REGISTRY.items()}


__all__ = ["explore", "check_all", "control", "Explorer", "REGISTRY", "memory_explorer"]
