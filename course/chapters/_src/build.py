"""Build both editions of every chapter from its one source, and keep the two languages in step.

    .venv/bin/python course/chapters/_src/build.py              # every _src/NN_*.py -> zh and en notebooks
    .venv/bin/python course/chapters/_src/build.py 04 05        # chapters whose file name starts with 04, 05
    .venv/bin/python course/chapters/_src/build.py --check      # exit 1 naming every stale notebook or twin
    .venv/bin/python course/chapters/_src/build.py --stamp 03 intro gap   # the twins of these cells now match
    .venv/bin/python course/chapters/_src/build.py --stamp 03   # every cell of chapter 03 (after a full review)

The source format is described in ``course/chapter.py``.  Chinese notebooks land in ``course/chapters/``, English
ones in ``course/chapters/en/``, and ``course/chapters/index.ipynb`` links both; no outputs, stable cell ids (the
same id for a cell in both editions), so the sources are what reviewers read and diff.

``--check`` fails when a notebook differs from what its source builds, and when a chapter is not one chapter in two
languages: a prose or text cell whose twin is missing, unstamped or edited on one side only (see
``course/twins.py``), prose in a code cell, a text the code uses but no cell defines (or the other way round), or
two languages filling different figures.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from course.chapter import CHAPTERS, EDITIONS, SOURCES, parse_source, problems
from course.i18n import LANGS
from course.twins import restamp

SRC, OUT = SOURCES, CHAPTERS
INDEX = CHAPTERS / "index.ipynb"
KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
          "language_info": {"name": "python"}}


def read(source: Path):
    return parse_source(source.read_text(encoding="utf-8"), source.stem)


def notebook(source: Path, lang: str) -> nbformat.NotebookNode:
    """The ``lang`` edition of ``source``: its prose in ``lang``, its code as written, no text cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {**KERNEL, "course": {"chapter": source.stem, "lang": lang}}
    code = 0
    for cell in read(source):
        if cell.kind == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(cell.twins.bodies[lang], id=f"{source.stem[:2]}-{cell.id}"))
        elif cell.kind == "code":
            nb.cells.append(nbformat.v4.new_code_cell(cell.code, id=f"{source.stem[:2]}-c{code:03d}"))
            code += 1
    nbformat.validate(nb)
    return nb


def title(source: Path, lang: str) -> str:
    first = next(c for c in read(source) if c.kind == "markdown").twins.bodies[lang]
    return next((ln[2:].strip() for ln in first.splitlines() if ln.startswith("# ")), source.stem)


def index(sources: list[Path]) -> nbformat.NotebookNode:
    """One page that opens either edition (and the glossary both share)."""
    rows = "\n".join(f"| {s.stem[:2]} | [{title(s, 'zh')}]({s.stem}.ipynb) | [{title(s, 'en')}](en/{s.stem}.ipynb) |"
                     for s in sources)
    body = ("# 流水线并行 · Pipeline parallelism\n\n"
            "中文版在这一层，English edition in `en/`. 两个版本由同一份源码生成，代码完全相同。"
            "Both editions are built from one source and run the same code.\n\n"
            "| # | 中文 | English |\n|---|---|---|\n" + rows +
            "\n\n[术语表 · Glossary](glossary.md)\n\n"
            "练习 · Exercises: `python practice/judge.py list` (`--lang zh` / `--lang en`)")
    nb = nbformat.v4.new_notebook(metadata=dict(KERNEL))
    nb.cells.append(nbformat.v4.new_markdown_cell(body, id="index"))
    return nb


def targets(sources: list[Path], everything: bool) -> dict[Path, str]:
    """Every file the build writes for ``sources``, with its exact text (the index only for a full build)."""
    out = {EDITIONS[lang] / f"{s.stem}.ipynb": nbformat.writes(notebook(s, lang)) + "\n"
           for s in sources for lang in LANGS}
    if everything:
        out[INDEX] = nbformat.writes(index(sources)) + "\n"
    return out


def stale(sources: list[Path], everything: bool = False) -> list[Path]:
    """The notebooks that differ from what their sources build (or are missing)."""
    return [path for path, text in targets(sources, everything).items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def build(source: Path) -> list[Path]:
    written = []
    for path, text in targets([source], everything=False).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def stamp(source: Path, ids: list[str]) -> list[str]:
    """Record that the twins of cells ``ids`` (all cells when empty) say the same now; returns the ids stamped."""
    lines = source.read_text(encoding="utf-8").splitlines()
    cells = [c for c in read(source) if c.twins is not None and (not ids or c.id in ids)]
    unknown = sorted(set(ids) - {c.id for c in cells})
    if unknown:
        raise SystemExit(f"{source.stem}: no prose or text cell {', '.join(unknown)}")
    for cell in cells:
        missing = [lang for lang in LANGS if not cell.twins.bodies.get(lang, "").strip()]
        if missing:
            raise SystemExit(f"{cell.twins.name}: no {' or '.join(missing)} text to stamp")
        span = slice(cell.start, cell.start + len(cell.lines))
        body = [ln[2:] if ln.startswith("# ") else ln for ln in lines[span]]
        lines[span] = [("# " + ln if ln.startswith("~~ ") else raw)
                       for ln, raw in zip(restamp(body, cell.twins), lines[span])]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [c.id for c in cells]


def main(args: list[str]) -> int:
    check = "--check" in args
    if "--stamp" in args:
        rest = [a for a in args if a != "--stamp"]
        if not rest:
            print("--stamp needs a chapter number, e.g. --stamp 03 [CELL_ID ...]", file=sys.stderr)
            return 2
        matches = sorted(SRC.glob(f"{rest[0]}*.py"))
        if len(matches) != 1:
            print(f"--stamp {rest[0]}: matches {len(matches)} chapter sources; give one chapter", file=sys.stderr)
            return 2
        done = stamp(matches[0], rest[1:])
        print(f"{matches[0].stem}: stamped {len(done)} cell(s)")
        return 0
    prefixes = [a for a in args if a != "--check"]
    sources = sorted(p for p in SRC.glob("[0-9][0-9]_*.py") if not prefixes or p.stem.startswith(tuple(prefixes)))
    if not sources:
        print(f"no chapter source matches {prefixes} in {SRC}", file=sys.stderr)
        return 2
    found = []
    for source in sources:
        try:
            found += problems(read(source), source.stem)
        except ValueError as e:
            found.append(str(e))
    for line in found:
        print(f"twins: {line}")
    if found:
        print("(to stamp a cell whose two texts say the same: .venv/bin/python course/chapters/_src/build.py "
              "--stamp NN CELL_ID)")
    if check:
        changed = [] if found else stale(sources, everything=not prefixes)
        for target in changed:
            print(f"out of date: {target.relative_to(ROOT)} (run: .venv/bin/python course/chapters/_src/build.py"
                  f"{' ' + target.stem[:2] if target != INDEX else ''})")
        return 1 if found or changed else 0
    if found:
        print("not built: mend the lines above first", file=sys.stderr)
        return 1
    for source in sources:
        for path in build(source):
            print(path.relative_to(ROOT))
    if not prefixes:
        INDEX.write_text(nbformat.writes(index(sources)) + "\n", encoding="utf-8")
        print(INDEX.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
