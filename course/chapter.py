"""One chapter, two editions: the source format, and what a chapter notebook calls while it runs.

A chapter is written once, in ``course/chapters/_src/NN_name.py`` (percent format, as jupytext reads it).  Its cells:

- ``# %%``: a **code** cell, shared byte for byte by both editions.  Code holds no prose: no Chinese at all, and
  every sentence it shows is a run-time text looked up by id (below), so both editions run the same code.
- ``# %% [markdown] ID``: a **prose** cell with a stable id and two bodies, one per language (see
  ``course/twins.py`` for the ``~~ zh STAMP`` / ``~~ en STAMP`` markers and what the stamps guard).
- ``# %% [text] ID``: a **run-time text**: a sentence with ``{placeholders}`` (``str.format``) that a code cell
  fills with the numbers it computed, ``text("ID", gap=gap)``, in the edition's language.  Both bodies use the same
  placeholder names, so the figures in the prose come from the same variables in both editions.  Text cells do not
  appear in the notebooks.

In markdown and text cells each line starts with ``# `` (removed when read).  ``build.py`` writes the Chinese edition
to ``course/chapters/NN_name.ipynb`` and the English one to ``course/chapters/en/NN_name.ipynb``; each notebook
carries ``metadata.course = {"chapter": "NN_name", "lang": ...}``.

While a notebook runs, its first cell calls ``text = open_chapter("NN_name")``.  The edition's language is read from
the notebook file of that name in the kernel's working directory (Jupyter, nbclient and JupyterLite start a kernel in
its notebook's folder), so a copy of the English notebook speaks English wherever it is opened; without that file
the language is ``course.i18n.language()``.  Library messages the chapter shows (``course.claims.reveal``) follow.

Standard library only (the browser edition runs it).
"""

from __future__ import annotations

import json
import os
import re
import string
from dataclasses import dataclass
from pathlib import Path

from . import i18n
from .twins import Twins, parse

CHAPTERS = Path(__file__).resolve().parent / "chapters"
SOURCES = CHAPTERS / "_src"
EDITIONS = {"zh": CHAPTERS, "en": CHAPTERS / "en"}       # where build.py writes each language's notebooks
GLOSSARY = CHAPTERS / "glossary.md"                       # one glossary, linked from both editions

# The words that open a chapter's recurring parts, per language (tests/test_chapters.py checks them).
MARKERS = {
    "predict": {"zh": "**预测：**", "en": "**Predict:**"},
    "task": {"zh": "**任务：**", "en": "**Task:**"},
    "selftest": {"zh": "自测", "en": "Self-test"},
    "summary": {"zh": "怎么讲清楚", "en": "How to explain it"},
}

HEADER = re.compile(r"^# %%(?: \[(?P<kind>markdown|text)\] (?P<id>[a-z0-9][a-z0-9-]*))?\s*$")
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")   # CJK ideographs and punctuation
TEXT_CALL = re.compile(r"""\btext\(\s*["']([a-z0-9][a-z0-9-]*)["']""")


@dataclass
class Cell:
    kind: str                  # "code", "markdown" or "text"
    id: str | None             # markdown and text cells only
    lines: list[str]           # the body as read (markdown/text: without the leading "# ")
    start: int                 # index of the cell's first body line in the source file
    twins: Twins | None = None

    @property
    def code(self) -> str:
        return "\n".join(self.lines).strip("\n")


def _uncomment(line: str) -> str:
    return line[2:] if line.startswith("# ") else line.lstrip("#")


def parse_source(text: str, chapter: str) -> list[Cell]:
    """The cells of a chapter source (empty code cells dropped); ValueError, naming the line, on a bad header."""
    cells: list[Cell] = []
    current: Cell | None = None
    for n, line in enumerate(text.splitlines()):
        if line.startswith("# %%"):
            hit = HEADER.match(line)
            if not hit:
                raise ValueError(f"{chapter}: line {n + 1}: bad cell header {line!r}; use '# %%', "
                                 "'# %% [markdown] ID' or '# %% [text] ID' (ID: lowercase letters, digits, '-')")
            current = Cell(hit["kind"] or "code", hit["id"], [], n + 1)
            cells.append(current)
        elif current is not None:
            current.lines.append(line if current.kind == "code" else _uncomment(line))
    out, seen = [], set()
    for cell in cells:
        if cell.kind == "code":
            if cell.code:
                out.append(cell)
            continue
        if cell.id in seen:
            raise ValueError(f"{chapter}: cell id {cell.id!r} is used twice")
        seen.add(cell.id)
        cell.twins = parse(cell.lines, f"{chapter}: {cell.kind} cell {cell.id}")
        out.append(cell)
    return out


def problems(cells: list[Cell], chapter: str) -> list[str]:
    """Everything that keeps a chapter's two editions from being the same chapter, one line each."""
    found = []
    code = "\n".join(c.code for c in cells if c.kind == "code")
    texts = {c.id: c for c in cells if c.kind == "text"}
    for i, cell in enumerate(c for c in cells if c.kind == "code"):
        hit = HAN.search(cell.code)
        if hit:
            line = next(ln for ln in cell.lines if HAN.search(ln))
            found.append(f"{chapter}: code cell {i} (source line {cell.start}) holds prose ({line.strip()[:60]!r}): "
                         "put sentences in a [text] cell and show them with text(ID, ...)")
    for cell in cells:
        if cell.twins is not None:
            found += cell.twins.problems()
    for id_ in sorted(set(TEXT_CALL.findall(code)) - texts.keys()):
        found.append(f"{chapter}: code calls text({id_!r}) but no '# %% [text] {id_}' cell defines it")
    for id_, cell in texts.items():
        if not re.search(rf"""["']{re.escape(id_)}["']""", code):
            found.append(f"{chapter}: text cell {id_} is never used by the code")
        fields = {lang: placeholders(body, f"{chapter}: text cell {id_} ({lang})")
                  for lang, body in cell.twins.bodies.items()}
        if len({frozenset(f) for f in fields.values()}) > 1:
            found.append(f"{chapter}: text cell {id_}: the languages fill different figures: "
                         + "; ".join(f"{lang} {sorted(f)}" for lang, f in fields.items()))
    return found


def placeholders(template: str, where: str) -> set[str]:
    """The field names a ``str.format`` template fills (``{gap:g}`` -> ``gap``; ``{tl.makespan}`` -> ``tl``)."""
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as e:
        raise ValueError(f"{where}: {e} (write a literal brace as {{{{ or }}}})") from None
    return {re.split(r"[.\[]", f, maxsplit=1)[0] for f in names}


def source_path(chapter: str) -> Path:
    return SOURCES / f"{chapter}.py"


def texts(chapter: str, lang: str) -> dict[str, str]:
    """A chapter's run-time texts in ``lang``, by id."""
    cells = parse_source(source_path(chapter).read_text(encoding="utf-8"), chapter)
    return {c.id: c.twins.bodies[lang] for c in cells if c.kind == "text"}


def edition_language(chapter: str) -> str | None:
    """The language recorded in this chapter's notebook as the running kernel sees it, if it can find it."""
    candidates = [Path(f"{chapter}.ipynb")]
    session = os.environ.get("JPY_SESSION_NAME", "")       # jupyter_server: the notebook this kernel belongs to
    if session.endswith(".ipynb"):
        candidates.insert(0, Path(session))
    for path in candidates:
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("course", {})
        except (OSError, ValueError, AttributeError):
            continue
        if meta.get("chapter") == chapter and meta.get("lang") in i18n.LANGS:
            return meta["lang"]
    return None


class Chapter:
    """A running chapter: ``text(ID, **figures)`` gives its run-time text ID in the edition's language."""

    def __init__(self, name: str, lang: str):
        self.name, self.lang = name, i18n.check_language(lang)
        self._texts = texts(name, lang)

    def __call__(self, id_: str, **figures) -> str:
        try:
            template = self._texts[id_]
        except KeyError:
            raise KeyError(f"{self.name}: no text {id_!r} (add a '# %% [text] {id_}' cell to its source)") from None
        return template.format(**figures)


def open_chapter(name: str, lang: str | None = None) -> Chapter:
    """Start chapter ``name``: find its edition's language (or take ``lang``), make it the process's, return texts."""
    lang = lang or edition_language(name) or i18n.language()
    i18n.set_language(lang)
    return Chapter(name, lang)


def md(text: str) -> None:
    """Show prose whose numbers come from the notebook's cells."""
    from IPython.display import Markdown, display

    display(Markdown(text))
