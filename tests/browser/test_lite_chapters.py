"""The browser edition, the other chapters that run there: chapters 2, 4, 6 and 7 (English) top to bottom in Pyodide.

``test_lite.py`` checks chapters 1 and 5 in depth (numbers against the desktop, a slider, the hosts); this one
checks that every cell of the other chapters that run in the browser finishes there without an error (chapters 3
and 8 need torch: their first cell says so, see the README's "In the browser").  The site is the one built for
``test_lite.py`` (``lite_build``: as ``make lite`` builds it, plus that file's checked chapters); each chapter opens in
a browser context of its own, all at once.
"""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_lite import outputs, run_all, serve_site

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

RUNNABLE = ["chapters/en/02_simulator.ipynb", "chapters/en/04_interleaved.ipynb", "chapters/en/06_dualpipe.ipynb",
            "chapters/en/07_jct.ipynb"]

# Every one of the notebook's code cells is on the page and has run (an execution count; none queued or running).
ALL_RAN_JS = """cells => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent.trim());
    return prompts.length === cells && prompts.every(t => /^\\[\\d+\\]:?$/.test(t));
}"""
CHAPTERS = Path(__file__).resolve().parents[2] / "course"


def code_cells(target: str) -> int:
    return sum(c.cell_type == "code" for c in nbformat.read(CHAPTERS / target, as_version=4).cells)


@pytest.fixture(scope="module")
def site(lite_build):
    yield from serve_site(lite_build)


def test_the_other_runnable_chapters_run_in_the_browser(site, chromium, screenshots):
    from course.search import NO_EXACT

    url = site
    requests: list[str] = []
    t0 = time.monotonic()
    contexts, pages = [], []
    for target in RUNNABLE:
        context = chromium.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
        context.set_default_timeout(30_000)
        context.on("request", lambda r: requests.append(r.url))
        page = context.new_page()
        page.goto(f"{url}/lab/index.html?path={target}")
        contexts.append(context)
        pages.append(page)
    for page in pages:
        run_all(page)
    problems, ran = [], {}
    for page, target in zip(pages, RUNNABLE):
        name = target.replace("/", "-")
        try:
            page.wait_for_function(ALL_RAN_JS, arg=code_cells(target), timeout=300_000, polling=1000)
        except PlaywrightTimeout:
            page.screenshot(path=screenshots / f"lite-{name}-timeout.png")
            problems.append(f"{target}: not every cell ran after {time.monotonic() - t0:.0f} s "
                            f"(lite-{name}-timeout.png)")
            continue
        ran[target] = time.monotonic() - t0
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
        if errors.count():
            page.screenshot(path=screenshots / f"lite-{name}-error.png")
            problems.append(f"{target}: {errors.all_text_contents()[0][-1500:]}")
        stray = [t for t in outputs(page, "application/vnd.jupyter.stderr") if NO_EXACT not in t]
        if stray:
            problems.append(f"{target}: unexpected stderr {stray}")
    hosts = sorted({urllib.parse.urlparse(u).hostname for u in requests if not u.startswith(("data:", "blob:"))})
    print("\n[lite] every cell ran: " + ", ".join(f"{t} after {s:.0f} s" for t, s in ran.items()))
    print(f"[lite] {len(requests)} requests to hosts {hosts}")
    for context in contexts:
        context.close()
    assert not problems, "\n".join(problems)
    assert hosts == ["127.0.0.1"], f"the pages reached beyond 127.0.0.1: {hosts}"
