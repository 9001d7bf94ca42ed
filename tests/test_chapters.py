"""Every chapter notebook, in both editions: committed clean, shaped like a chapter, the two editions one chapter,
the glossary followed, executes headless, and its widgets work.

Executing a notebook alone proves little about its widgets: ``interactive_output`` prints a redraw's exception into
the widget's Output and carries on.  So after the chapter's own cells, the same kernel runs
``course.widgets.check_all()``, which moves every control of every explorer off its default through the real
widget and reports exceptions and controls that leave the figure unchanged.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course.book import CHAPTERS_DIR, chapters, execute
from course.chapter import GLOSSARY, HAN, MARKERS, SOURCES, parse_source
from course.i18n import LANGS

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = [(lang, path) for lang in LANGS for path in chapters(lang=lang)]
PROBLEMS = ROOT / "practice" / "problems"
JUDGE_START = re.compile(r"python practice/judge\.py start ([a-z0-9][a-z0-9-]*)")
CHECK_TAG = "WIDGET-CHECK "
CHECK_CELL = ("import json as _json, course.widgets as _widgets\n"
              f"print({CHECK_TAG!r} + _json.dumps(_widgets.check_all()))")
ids = [f"{lang}-{p.stem}" for lang, p in EDITIONS]
STEMS = sorted(p.stem for p in SOURCES.glob("[0-9][0-9]_*.py"))


def read(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


def text_of(nb) -> str:
    return "\n".join(c.source for c in nb.cells)


def edition(lang: str, stem: str) -> Path:
    return (CHAPTERS_DIR if lang == "zh" else CHAPTERS_DIR / lang) / f"{stem}.ipynb"


def test_chapters_exist_in_both_editions():
    for lang in LANGS:
        assert [p.stem for p in chapters(lang=lang)] == STEMS, f"the {lang} edition does not hold every chapter"


@pytest.mark.parametrize("lang,path", EDITIONS, ids=ids)
def test_committed_without_outputs(lang, path):
    nb = read(path)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{path.name}: code cells {dirty} carry outputs or execution counts; strip them before committing"
    assert nb.metadata.get("course") == {"chapter": path.stem, "lang": lang}, f"{path}: no edition metadata"


@pytest.mark.parametrize("lang,path", EDITIONS, ids=ids)
def test_chapter_shape(lang, path):
    nb = read(path)
    head = [c for c in nb.cells[:4] if c.cell_type == "markdown"]
    selftest = [c for c in head if MARKERS["selftest"][lang] in c.source]
    assert selftest, f"{path}: no {MARKERS['selftest'][lang]} markdown cell among the first four cells"
    assert "<details>" in selftest[0].source, f"{path}: the self-test's answers must be folded in <details>"
    text = text_of(nb)
    assert MARKERS["summary"][lang] in text, f"{path}: no closing {MARKERS['summary'][lang]!r} summary"
    assert "explore(" in text, f"{path}: no widget built with course.widgets.explore"
    slugs = JUDGE_START.findall(text)
    assert slugs, f"{path}: no exercise line 'python practice/judge.py start <slug>'"
    if PROBLEMS.is_dir():
        missing = sorted({s for s in slugs if not (PROBLEMS / s).is_dir()})
        assert not missing, f"{path}: exercises {missing} have no directory in practice/problems/"


def prompts_and_answers(nb, marker: str, prefix: str) -> list[tuple[int, str | None]]:
    """For each markdown cell starting with ``marker``: its index and the ``prefix...`` variable the next code
    cell sets to None (None when the next cell is not such a code cell)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith(marker):
            nxt = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
            hit = (re.search(rf"^({prefix}\w*)\s*=\s*None\b", nxt.source, re.M)
                   if nxt and nxt.cell_type == "code" else None)
            found.append((i, hit.group(1) if hit else None))
    return found


@pytest.mark.parametrize("lang,path", EDITIONS, ids=ids)
def test_predict_then_check(lang, path):
    """At least three predictions: a Predict prompt, a code cell where the learner's guess starts as None, and a
    later cell that reveals the computed answer next to that guess."""
    nb = read(path)
    marker = MARKERS["predict"][lang]
    found = prompts_and_answers(nb, marker, "guess")
    assert len(found) >= 3, f"{path}: {len(found)} markdown cells start with {marker}; a chapter needs >= 3"
    for i, name in found:
        assert name, (f"{path}: the cell after the prediction prompt at cell {i} must be a code cell "
                      "assigning the learner's guess, e.g. `guess_peak = None`")
        later = "\n".join(c.source for c in nb.cells[i + 2:] if c.cell_type == "code")
        assert re.search(rf"reveal\(\s*{name}\b", later), f"{path}: no reveal({name}, ...) after cell {i}"


@pytest.mark.parametrize("lang,path", EDITIONS, ids=ids)
def test_every_widget_has_a_checkable_task(lang, path):
    """Each explorer comes with a Task whose answer the learner enters (answer_... = None) and a cell checks."""
    nb = read(path)
    widgets = sum(len(re.findall(r"^\s*(?:\w+\s*=\s*)?explore\(", c.source, re.M))
                  for c in nb.cells if c.cell_type == "code")
    tasks = prompts_and_answers(nb, MARKERS["task"][lang], "answer")
    assert len(tasks) >= widgets, f"{path}: {widgets} widgets but {len(tasks)} {MARKERS['task'][lang]} cells"
    for i, name in tasks:
        assert name, f"{path}: the cell after the task at cell {i} must assign `answer_... = None`"
        later = "\n".join(c.source for c in nb.cells[i + 2:] if c.cell_type == "code")
        assert re.search(rf"reveal\(\s*{name}\b", later), f"{path}: no reveal({name}, ...) after cell {i}"


@pytest.mark.parametrize("lang,path", EDITIONS, ids=ids)
def test_links_the_glossary_and_checks_its_claims(lang, path):
    nb = read(path)
    md_text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    link = "glossary.md" if lang == "zh" else "../glossary.md"
    assert f"]({link})" in md_text, f"{path}: no link to the glossary ({link}) in its markdown"
    assert (path.parent / link).resolve() == GLOSSARY.resolve()
    assert "claim(" in text_of(nb), f"{path}: no sentence goes through course.claims.claim"


# --- the two editions are one chapter -------------------------------------------------------------------------

COUNTED = {"claims": r"\bclaim\(", "reveals": r"\breveal\(", "widgets": r"\bexplore\(", "texts": r"\btext\("}


@pytest.mark.parametrize("stem", STEMS)
def test_editions_in_parity(stem):
    """The same code cells byte for byte and in order, the same prose cells (by id), and so the same claims,
    predictions, tasks and widgets; each edition's prompts in its own language."""
    zh, en = read(edition("zh", stem)), read(edition("en", stem))
    code = {lang: [c.source for c in nb.cells if c.cell_type == "code"] for lang, nb in (("zh", zh), ("en", en))}
    assert code["zh"] == code["en"], f"{stem}: the editions' code cells differ"
    assert [c.id for c in zh.cells] == [c.id for c in en.cells], f"{stem}: the editions' cells differ in id or order"
    for kind in ("predict", "task"):
        counts = {lang: sum(c.cell_type == "markdown" and c.source.lstrip().startswith(MARKERS[kind][lang])
                            for c in nb.cells) for lang, nb in (("zh", zh), ("en", en))}
        assert counts["zh"] == counts["en"], f"{stem}: {kind} prompts {counts}"
        positions = {lang: [c.id for c in nb.cells if c.cell_type == "markdown"
                            and c.source.lstrip().startswith(MARKERS[kind][lang])]
                     for lang, nb in (("zh", zh), ("en", en))}
        assert positions["zh"] == positions["en"], f"{stem}: {kind} prompts sit in different cells: {positions}"
    for name, pattern in COUNTED.items():
        n = len(re.findall(pattern, "\n".join(code["zh"])))
        assert name == "texts" or n, f"{stem}: no {name} at all"


def prose(stem: str, lang: str) -> list[tuple[str, str]]:
    """(cell id, body) of every prose and run-time text of ``stem`` in ``lang``."""
    cells = parse_source((SOURCES / f"{stem}.py").read_text(encoding="utf-8"), stem)
    return [(c.id, c.twins.bodies.get(lang, "")) for c in cells if c.twins is not None]


QUOTED_ZH = re.compile(r'<span lang="zh">.*?</span>', re.S)     # a clearly marked Chinese quotation


@pytest.mark.parametrize("stem", STEMS)
def test_english_edition_has_no_chinese(stem):
    for cell_id, body in prose(stem, "en"):
        hit = HAN.search(QUOTED_ZH.sub("", body))
        assert not hit, (f"{stem}: English text of cell {cell_id} holds Chinese "
                         f"({body[max(0, hit.start() - 30):hit.end() + 30]!r}); "
                         "quote it in <span lang=\"zh\">...</span>")


def paragraphs(body: str) -> list[str]:
    body = re.sub(r"```.*?```", "", body, flags=re.S)
    return [p for p in re.split(r"\n\s*\n", body) if p.strip()]


def words_outside_markup(text: str) -> list[str]:
    text = re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|<[^>]+>|\]\([^)]*\)|\{[^}]*\}", " ", text, flags=re.S)
    return re.findall(r"[A-Za-z][A-Za-z'-]+", text)


@pytest.mark.parametrize("stem", STEMS)
def test_chinese_edition_has_no_untranslated_paragraph(stem):
    """Chinese prose keeps English terms, never whole English sentences: a paragraph of six or more English words
    and no Chinese at all was left untranslated (tables and headings of figures count too)."""
    for cell_id, body in prose(stem, "zh"):
        for par in paragraphs(body):
            words = words_outside_markup(par)
            assert HAN.search(par) or len(words) < 6, (f"{stem}: Chinese text of cell {cell_id} has an English "
                                                       f"paragraph: {par[:120]!r}")


# --- the glossary ---------------------------------------------------------------------------------------------

def glossary_table(title: str) -> list[list[str]]:
    """The rows (without header) of the glossary's table under the heading that starts with ``title``."""
    text = GLOSSARY.read_text(encoding="utf-8")
    section = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"{GLOSSARY.name}: no section '## {title}'"
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in section.group(1).splitlines()
            if ln.startswith("|")]
    return [r for r in rows[2:]]          # skip the header and its |---| line


def test_glossary_has_both_languages_and_covers_every_chapter():
    rows = glossary_table("Terms")
    assert len(rows) >= 60, f"{GLOSSARY.name}: {len(rows)} terms; need >= 60"
    for row in rows:
        assert len(row) == 5 and all(row), f"{GLOSSARY.name}: row {row} needs English, 中文, ch, definition, 说明"
        assert not HAN.search(row[0] + row[3]), f"{GLOSSARY.name}: Chinese in the English columns of {row}"
        assert HAN.search(row[4]), f"{GLOSSARY.name}: no Chinese definition in {row}"
    firsts = {int(r[2]) for r in rows}
    wanted = {int(s[:2]) for s in STEMS}
    assert wanted <= firsts, f"{GLOSSARY.name}: no term first used in chapter(s) {sorted(wanted - firsts)}"
    english = [r[0].lower() for r in rows]
    dupes = sorted({e for e in english if english.count(e) > 1})
    assert not dupes, f"{GLOSSARY.name}: terms listed twice: {dupes}"


def glossary_words() -> set[str]:
    """Every word the glossary's English columns and names table use, lower case."""
    words = set()
    for row in glossary_table("Terms") + glossary_table("Names"):
        words |= {w.lower() for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9+\-_.&]*[A-Za-z0-9+]|[A-Za-z]", row[0])}
    return words


def terms_in(text: str) -> set[str]:
    """The English terms a Chinese text uses outside code, maths and markup, lower case."""
    text = re.sub(r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|<[^>]+>|\]\([^)]*\)|\{[^}]*\}", " ", text, flags=re.S)
    return {t.lower() for t in re.findall(r"[A-Za-z0-9][A-Za-z0-9+\-_.&]*[A-Za-z0-9+]|[A-Za-z]", text)
            if re.search("[A-Za-z]", t)}


COMMON = {"a", "et", "al", "for", "in", "and", "of", "the", "to", "vs", "bug", "id", "api", "x", "n", "k", "i", "t"}


def test_terms_used_in_two_chapters_are_in_the_glossary():
    seen: dict[str, set[str]] = {}
    for stem in STEMS:
        for term in terms_in("\n".join(body for _, body in prose(stem, "zh"))):
            seen.setdefault(term, set()).add(stem[:2])
    known = glossary_words() | COMMON
    missing = sorted(t for t, where in seen.items() if len(where) >= 2 and t not in known)
    assert not missing, f"{GLOSSARY.name}: English terms used in two or more chapters without a row: {missing}"


@pytest.mark.parametrize("stem", STEMS)
def test_chapters_use_the_glossarys_words(stem):
    """One term per idea: the words the glossary rules out appear in no chapter (both languages)."""
    bans = glossary_table("Words we do not use")
    for lang in LANGS:
        for cell_id, body in prose(stem, lang):
            for ban_lang, pattern, instead in bans:
                if ban_lang == lang:
                    hit = re.search(pattern, body, re.I)
                    assert not hit, \
                        f"{stem}: {lang} cell {cell_id} writes {hit.group(0)!r}; the glossary says {instead}"


# --- one source: the drift check ------------------------------------------------------------------------------

def test_a_stale_twin_fails_the_check_and_is_named(tmp_path):
    """Edit one language of one cell in a copy: ``build.py --check`` (what ``make check`` runs) names the chapter,
    the cell and the language to update, for an edit on either side; re-stamping clears it."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "course", copy / "course", ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    stem = STEMS[0]
    source = copy / "course" / "chapters" / "_src" / f"{stem}.py"
    cells = [c for c in parse_source(source.read_text(encoding="utf-8"), stem) if c.kind == "markdown"]
    target = cells[1]
    build = [sys.executable, str(copy / "course" / "chapters" / "_src" / "build.py")]
    original = source.read_text(encoding="utf-8")
    for lang, other in (("zh", "en"), ("en", "zh")):
        lines = original.splitlines()
        marker = next(i for i in range(target.start, target.start + len(target.lines))
                      if lines[i].startswith(f"# ~~ {lang} "))
        lines[marker + 1] += " (edited)"
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        proc = subprocess.run([*build, "--check", stem[:2]], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert (f"{stem}: markdown cell {target.id}: the {lang} text changed since its {other} twin was last matched"
                in proc.stdout), proc.stdout
    source.write_text(original, encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "course/chapters/_src/build.py --check" in makefile, "make check no longer runs the drift check"
    source.write_text(source.read_text(encoding="utf-8").replace("# %%\n", "# %%\nx = '中文'\n", 1), encoding="utf-8")
    proc = subprocess.run([*build, "--check", stem[:2]], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "holds prose" in proc.stdout, proc.stdout


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
@pytest.mark.parametrize("lang,path", EDITIONS, ids=ids)
def test_executes_and_widgets_react(lang, path, capsys):
    nb, elapsed = execute(path, extra_code=CHECK_CELL)   # raises CellExecutionError naming the failing cell
    with capsys.disabled():
        print(f"\n[chapter timing] {lang}/{path.name}: executed in {elapsed:.1f} s")
    if lang == "en":     # what the English edition printed is English too: library messages follow the edition
        for i, cell in enumerate(nb.cells):
            for out in cell.get("outputs", []):
                shown = out.get("text", "") + str(out.get("data", {}).get("text/markdown", ""))
                hit = HAN.search(shown)
                assert not hit, f"{path}: cell {i} printed Chinese: {shown[max(0, hit.start() - 40):hit.end() + 40]!r}"

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


# --- the browser edition's path ---------------------------------------------------------------------------------

# The chapters that run top to bottom in the browser (Pyodide: no numpy, matplotlib, torch or OR-Tools); the others
# need torch and say so in their first cell.  tests/browser/test_lite*.py run these in Pyodide itself.
IN_BROWSER = ["01_bubble", "02_simulator", "04_interleaved", "05_zero_bubble", "06_dualpipe", "07_jct"]
DESKTOP_NOTE = {"zh": "桌面版", "en": "desktop edition"}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("stem", IN_BROWSER)
def test_runs_on_the_browsers_standard_library_path(stem, tmp_path, capsys):
    """The chapter with numpy, matplotlib, torch and OR-Tools hidden and SVG figures, as the browser edition runs
    it (recordings for the live cells, the heuristic for the exact search); its widgets redraw their SVG."""
    import stdlib_path

    nb = read(edition("zh", stem))
    prelude = stdlib_path.PRELUDE + "import os\nos.environ['COURSE_FIGURES'] = 'svg'"
    nb.cells.insert(0, nbformat.v4.new_code_cell(prelude))
    path = tmp_path / f"{stem}.ipynb"        # beside no other chapter: it finds its edition in its own file
    nbformat.write(nb, path)
    nb, elapsed = execute(path, extra_code=CHECK_CELL + "\nimport sys\nprint('ABSENT', sorted(m for m in "
                          "('numpy', 'matplotlib', 'torch', 'ortools') if m in sys.modules))")
    with capsys.disabled():
        print(f"\n[chapter timing] {stem} on the standard-library path: {elapsed:.1f} s")
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert "ABSENT []" in out, f"{stem}: imported a module the browser lacks: {out!r}"
    report = json.loads(next(ln for ln in out.splitlines() if ln.startswith(CHECK_TAG))[len(CHECK_TAG):])
    problems = [p for probs in report.values() for p in probs]
    assert report and not problems, f"{stem}: widget problems on the SVG path:\n" + "\n".join(problems)
    svg = [o for c in nb.cells for o in c.get("outputs", []) if "image/svg+xml" in o.get("data", {})]
    png = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert svg and not png, f"{stem}: {len(svg)} SVG and {len(png)} PNG figures on the SVG path"


@pytest.mark.parametrize("stem", sorted(set(STEMS) - set(IN_BROWSER)))
def test_a_chapter_the_browser_cannot_run_says_so_first(stem):
    for lang, note in DESKTOP_NOTE.items():
        first = read(edition(lang, stem)).cells[0]
        assert first.cell_type == "markdown" and note in first.source, \
            f"{lang}/{stem}: its first cell does not name what needs the desktop edition ({note!r})"
