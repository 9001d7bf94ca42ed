"""Execute the chapter notebooks and render them to static HTML for offline reading.

    python -m course.book                 # every chapter -> _book/NN_name.html, _book/en/NN_name.html, index.html
    python -m course.book 01 02           # chapters whose file name starts with 01, 02
    python -m course.book --out DIR

The HTML has no live kernel: each widget shows the figure it drew with its default values (``course.widgets``
puts that image into the widget's display bundle).  ``execute`` is also what tests/test_chapters.py runs.
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from .chapter import EDITIONS
from .files import write_file
from .kernels import KernelManager

CHAPTERS_DIR = EDITIONS["zh"]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def chapters(prefixes: list[str] | None = None, lang: str = "zh") -> list[Path]:
    """The ``lang`` edition's chapter notebooks NN_name.ipynb, optionally only those whose name starts with one of
    ``prefixes``."""
    folder = CHAPTERS_DIR if lang == "zh" else CHAPTERS_DIR / lang     # the layout of course.chapter.EDITIONS
    found = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not prefixes or p.name.startswith(tuple(prefixes))]


def execute(path: Path, extra_code: str | None = None, timeout: int = 300) -> tuple[nbformat.NotebookNode, float]:
    """Run every cell of ``path`` (plus ``extra_code`` as a last cell, in the same kernel) in the chapters folder.

    Returns the executed notebook and the wall time in seconds; raises nbclient's CellExecutionError naming the
    first failing cell."""
    nb = nbformat.read(path, as_version=4)
    if extra_code is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra_code))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", kernel_manager_class=KernelManager,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - t0


def static_widgets(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop live-widget views (they need a kernel) so each widget's image/png fallback is what renders."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data and len(data) > 1:
                del data[WIDGET_VIEW]
    nb.metadata.pop("widgets", None)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(static_widgets(nb))
    return body


def title_of(nb: nbformat.NotebookNode, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course.book", description=__doc__.splitlines()[0])
    ap.add_argument("prefixes", nargs="*", help="only chapters whose file name starts with these (e.g. 01 02)")
    ap.add_argument("--out", type=Path, default=Path("_book"), help="output folder (default: _book)")
    args = ap.parse_args(argv)
    paths = [p for lang in EDITIONS for p in chapters(args.prefixes, lang)]
    if not paths:
        print(f"no chapter matches {args.prefixes} in {CHAPTERS_DIR}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    entries, failed, started = [], [], time.perf_counter()
    for k, path in enumerate(paths, 1):
        # one line as each chapter starts (a chapter runs for up to a minute) and one as it ends
        print(f"[{k}/{len(paths)}] {path.name}: running its cells ...", flush=True)
        try:
            nb, seconds = execute(path)
        except CellExecutionError as err:   # render the others; report this one and fail at the end
            failed.append(path.name)
            print(f"[{k}/{len(paths)}] {path.name}: a cell failed, no HTML written:\n{err}", file=sys.stderr,
                  flush=True)
            continue
        target = args.out / path.relative_to(CHAPTERS_DIR).with_suffix(".html")   # en/ keeps its folder
        target.parent.mkdir(parents=True, exist_ok=True)
        write_file(target, render(nb))
        entries.append((target.relative_to(args.out).as_posix(), title_of(nb, path.stem)))
        print(f"[{k}/{len(paths)}] {path.relative_to(CHAPTERS_DIR)}: ran in {seconds:.1f} s, wrote {target}",
              flush=True)
    items = "\n".join(f'<li><a href="{html.escape(href)}">{html.escape(title)}</a></li>' for href, title in entries)
    write_file(args.out / "index.html",
               f'<!doctype html><html><meta charset="utf-8"><title>Pipeline parallelism course</title>'
               f"<body><h1>Pipeline parallelism course</h1><ol>\n{items}\n</ol></body></html>\n")
    print(f"wrote {args.out / 'index.html'} ({len(entries)} chapters in {time.perf_counter() - started:.0f} s)")
    if failed:
        print(f"{len(failed)} chapter(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
