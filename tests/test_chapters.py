"""Every chapter notebook: committed clean, shaped like a chapter, executes headless, and its widgets work.

Executing a notebook alone proves little about its widgets: ``interactive_output`` prints a redraw's exception into
the widget's Output and carries on.  So after the chapter's own cells, the same kernel runs
``course.widgets.check_all()``, which moves every control of every explorer off its default through the real
widget and reports exceptions and controls that leave the figure unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from course.book import CHAPTERS_DIR, chapters, execute

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = chapters()
PROBLEMS = ROOT / "practice" / "problems"
JUDGE_START = re.compile(r"python practice/judge\.py start ([a-z0-9][a-z0-9-]*)")
CHECK_TAG = "WIDGET-CHECK "
CHECK_CELL = ("import json as _json, course.widgets as _widgets\n"
              f"print({CHECK_TAG!r} + _json.dumps(_widgets.check_all()))")
ids = [p.stem for p in CHAPTERS]


def read(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


def text_of(nb) -> str:
    return "\n".join(c.source for c in nb.cells)


def test_chapters_exist():
    assert CHAPTERS, f"no chapter notebooks (NN_name.ipynb) in {CHAPTERS_DIR}"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids)
def test_committed_without_outputs(path):
    nb = read(path)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{path.name}: code cells {dirty} carry outputs or execution counts; strip them before committing"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids)
def test_chapter_shape(path):
    nb = read(path)
    head = [c for c in nb.cells[:4] if c.cell_type == "markdown"]
    selftest = [c for c in head if "自测" in c.source]
    assert selftest, f"{path.name}: no 自测 (self-test) markdown cell among the first four cells"
    assert "<details>" in selftest[0].source, f"{path.name}: the self-test's answers must be folded in <details>"
    text = text_of(nb)
    assert "怎么讲清楚" in text, f"{path.name}: no closing 怎么讲清楚 summary"
    assert "explore(" in text, f"{path.name}: no widget built with course.widgets.explore"
    slugs = JUDGE_START.findall(text)
    assert slugs, f"{path.name}: no exercise line 'python practice/judge.py start <slug>'"
    if PROBLEMS.is_dir():
        missing = sorted({s for s in slugs if not (PROBLEMS / s).is_dir()})
        assert not missing, f"{path.name}: exercises {missing} have no directory in practice/problems/"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", CHAPTERS, ids=ids)
def test_executes_and_widgets_react(path, capsys):
    nb, elapsed = execute(path, extra_code=CHECK_CELL)   # raises CellExecutionError naming the failing cell
    with capsys.disabled():
        print(f"\n[chapter timing] {path.name}: executed in {elapsed:.1f} s")

    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    line = next((ln for ln in out.splitlines() if ln.startswith(CHECK_TAG)), None)
    assert line, f"{path.name}: the widget check printed nothing: {out!r}"
    report = json.loads(line[len(CHECK_TAG):])
    assert report, f"{path.name}: executed without registering any widget (use course.widgets.explore)"
    problems = [p for probs in report.values() for p in probs]
    assert not problems, f"{path.name}: widget problems:\n" + "\n".join(problems)


def test_widget_check_reports_errors_and_dead_controls():
    """The check itself can fail: a redraw that raises, and a control the drawing ignores, are both reported."""
    from course import widgets

    def lines(fig, m, ignored, style):
        if m > 20:
            raise ValueError("m too large for this drawing")
        fig.add_subplot().plot(range(m), linestyle=style)

    widgets.explore(lines, name="test-lines", m=(1, 32, 8), ignored=(0.0, 1.0, 0.5), style=["-", "--"])
    try:
        problems = widgets.REGISTRY["test-lines"].check()
    finally:
        widgets.REGISTRY.pop("test-lines")
    assert any("m=32 failed" in p and "m too large" in p for p in problems), problems
    assert any("moving ignored" in p for p in problems), problems
    assert not any("style" in p for p in problems), problems
    assert len(problems) == 2, problems


def test_widget_spec_errors_are_clear():
    from course.widgets import control

    with pytest.raises(ValueError, match="outside"):
        control("m", (1, 8, 9))
    with pytest.raises(ValueError, match="unsupported spec"):
        control("m", {"min": 1})


def test_book_renders_widgets_as_their_first_image(tmp_path):
    """The static book has no kernel: a widget's display shows the image/png it carried, not a dead widget view."""
    from course.book import WIDGET_VIEW, main, render

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
    cell = nbformat.v4.new_code_cell("explore(...)", outputs=[nbformat.v4.new_output(
        "display_data", data={WIDGET_VIEW: {"model_id": "x", "version_major": 2, "version_minor": 0},
                              "image/png": png, "text/plain": "VBox()"})])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), cell])
    html = render(nb)
    assert f"data:image/png;base64,{png}" in html
    assert WIDGET_VIEW not in html
    assert main(["99", "--out", str(tmp_path)]) == 2   # no chapter 99: a clear refusal, nothing written
    assert not any(tmp_path.iterdir())


def test_book_renders_the_good_chapters_and_fails_on_a_broken_one(tmp_path, monkeypatch):
    import course.book as book

    src = tmp_path / "chapters"
    src.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")]), src / "01_broken.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Fine"),
                                                   nbformat.v4.new_code_cell("print(6 * 7)")]), src / "02_fine.ipynb")
    monkeypatch.setattr(book, "CHAPTERS_DIR", src)
    out = tmp_path / "book"
    assert book.main(["--out", str(out)]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["02_fine.html", "index.html"]
    assert "42" in (out / "02_fine.html").read_text(encoding="utf-8")
    assert "Fine" in (out / "index.html").read_text(encoding="utf-8")
