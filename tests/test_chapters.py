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


PREDICT = "**预测：**"
TASK = "**任务：**"
GLOSSARY = CHAPTERS_DIR / "glossary.md"


def prompts_and_answers(nb, marker: str, prefix: str) -> list[tuple[int, str | None]]:
    """For each markdown cell starting with ``marker``: its index and the ``prefix...`` variable the next code
    cell sets to None (None when the next cell is not such a code cell)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith(marker):
            nxt = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
            hit = re.search(rf"^({prefix}\w*)\s*=\s*None\b", nxt.source, re.M) if nxt and nxt.cell_type == "code" else None
            found.append((i, hit.group(1) if hit else None))
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=ids)
def test_predict_then_check(path):
    """At least three predictions: a 预测 prompt, a code cell where the learner's guess starts as None, and a
    later cell that reveals the computed answer next to that guess."""
    nb = read(path)
    found = prompts_and_answers(nb, PREDICT, "guess")
    assert len(found) >= 3, f"{path.name}: {len(found)} markdown cells start with {PREDICT}; a chapter needs >= 3"
    for i, name in found:
        assert name, (f"{path.name}: the cell after the prediction prompt at cell {i} must be a code cell "
                      "assigning the learner's guess, e.g. `guess_peak = None`")
        later = "\n".join(c.source for c in nb.cells[i + 2:] if c.cell_type == "code")
        assert re.search(rf"reveal\(\s*{name}\b", later), f"{path.name}: no reveal({name}, ...) after cell {i}"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids)
def test_every_widget_has_a_checkable_task(path):
    """Each explorer comes with a 任务 whose answer the learner enters (answer_... = None) and a cell checks."""
    nb = read(path)
    widgets = sum(len(re.findall(r"^\s*(?:\w+\s*=\s*)?explore\(", c.source, re.M))
                  for c in nb.cells if c.cell_type == "code")
    tasks = prompts_and_answers(nb, TASK, "answer")
    assert len(tasks) >= widgets, f"{path.name}: {widgets} widgets but {len(tasks)} {TASK} cells"
    for i, name in tasks:
        assert name, f"{path.name}: the cell after the task at cell {i} must assign `answer_... = None`"
        later = "\n".join(c.source for c in nb.cells[i + 2:] if c.cell_type == "code")
        assert re.search(rf"reveal\(\s*{name}\b", later), f"{path.name}: no reveal({name}, ...) after cell {i}"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids)
def test_links_the_glossary_and_checks_its_claims(path):
    nb = read(path)
    text = text_of(nb)
    md_text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "glossary.md" in md_text, f"{path.name}: no link to the glossary (glossary.md) in its markdown"
    assert "claim(" in text, f"{path.name}: no sentence goes through course.claims.claim"


def glossary_rows() -> list[list[str]]:
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cols) >= 3 and re.fullmatch(r"第 \d 章", cols[2]):
            rows.append(cols)
    return rows


def test_glossary_has_forty_terms_covering_every_chapter():
    rows = glossary_rows()
    assert len(rows) >= 40, f"{GLOSSARY.name}: {len(rows)} terms (中文 | English | 第 N 章 rows); need >= 40"
    firsts = {int(r[2].split()[1]) for r in rows}
    wanted = {int(p.name[:2]) for p in CHAPTERS}
    assert wanted <= firsts, f"{GLOSSARY.name}: no term first used in chapter(s) {sorted(wanted - firsts)}"
    english = [r[1].lower() for r in rows]
    dupes = sorted({e for e in english if english.count(e) > 1})
    assert not dupes, f"{GLOSSARY.name}: terms listed twice: {dupes}"
    for term in ("bubble", "rank", "makespan", "micro-batch"):
        assert any(term in e for e in english), f"{GLOSSARY.name}: no row for {term}"


def test_a_guarded_sentence_that_turns_false_fails_the_notebook(tmp_path):
    """The whole point of claim(): the same cell that passes with supporting data stops the notebook without."""
    from nbclient.exceptions import CellExecutionError

    cell = ("from course.claims import claim\n"
            "peak = {peak}\n"
            "print(claim(peak == 4, '峰值是 4 份。', peak=peak))")
    good, bad = tmp_path / "01_good.ipynb", tmp_path / "02_bad.ipynb"
    for path, peak in ((good, 4), (bad, 5)):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.format(peak=peak))]), path)
    nb, _ = execute(good)
    assert "峰值是 4 份" in nb.cells[0].outputs[0]["text"]
    with pytest.raises(CellExecutionError, match=r"ClaimError.*peak=5"):
        execute(bad)


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


def test_book_renders_the_good_chapters_and_fails_on_a_broken_one(tmp_path, monkeypatch, capsys):
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
    # progress: a line as each chapter starts and one as it ends, numbered
    said = capsys.readouterr()
    assert said.out.splitlines()[:2] == ["[1/2] 01_broken.ipynb: running its cells ...",
                                         "[2/2] 02_fine.ipynb: running its cells ..."]
    assert "[1/2] 01_broken.ipynb: a cell failed" in said.err
    assert re.search(r"^\[2/2\] 02_fine.ipynb: ran in [\d.]+ s, wrote .*02_fine.html$", said.out, re.M), said.out
