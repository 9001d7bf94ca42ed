"""Build chapter notebooks from their percent-format sources (the format jupytext reads).

    .venv/bin/python course/chapters/_src/build.py              # every _src/NN_*.py
    .venv/bin/python course/chapters/_src/build.py 04 05        # chapters whose file name starts with 04, 05
    .venv/bin/python course/chapters/_src/build.py --check      # exit 1 naming each notebook that is out of date

A source is a Python file whose cells start with ``# %%`` (code) or ``# %% [markdown]`` (markdown; each line
loses its leading ``# ``).  The notebook lands next to ``_src/`` with the same stem and no outputs, so the
sources are what reviewers read and diff, and the .ipynb files are what learners open.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

SRC = Path(__file__).resolve().parent
OUT = SRC.parent


def parse_cells(text: str) -> list:
    cells, kind, lines = [], None, []

    def flush():
        body = "\n".join(lines).strip("\n")
        if kind is not None and body:
            cells.append(nbformat.v4.new_markdown_cell(body) if kind == "markdown" else nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code":
            lines.append(line)
    flush()
    return cells


def render(source: Path) -> tuple[Path, str]:
    """The notebook built from ``source``: its path and its exact text."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "language_info": {"name": "python"}}
    nb.cells = parse_cells(source.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb.cells):
        cell.id = f"{source.stem[:2]}-{i:03d}"   # stable ids: rebuilding an unchanged source changes nothing
    nbformat.validate(nb)
    return OUT / f"{source.stem}.ipynb", nbformat.writes(nb) + "\n"


def build(source: Path) -> Path:
    target, text = render(source)
    target.write_text(text, encoding="utf-8")
    return target


def stale(sources: list[Path]) -> list[Path]:
    """The notebooks that differ from what their sources build (or are missing)."""
    out = []
    for source in sources:
        target, text = render(source)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            out.append(target)
    return out


def main(args: list[str]) -> int:
    check = "--check" in args
    prefixes = [a for a in args if a != "--check"]
    sources = sorted(p for p in SRC.glob("[0-9][0-9]_*.py") if not prefixes or p.stem.startswith(tuple(prefixes)))
    if not sources:
        print(f"no chapter source matches {prefixes} in {SRC}", file=sys.stderr)
        return 2
    if check:
        changed = stale(sources)
        for target in changed:
            print(f"out of date: {target.relative_to(OUT.parent.parent)} "
                  f"(run: .venv/bin/python course/chapters/_src/build.py {target.stem[:2]})")
        return 1 if changed else 0
    for source in sources:
        print(build(source).relative_to(OUT.parent.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
