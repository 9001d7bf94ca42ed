"""The browser edition: ``lite/build.py`` builds the JupyterLite site, Chromium runs the real chapters in it, offline.

The site is built once (``lite_build``, shared with test_lite_chapters.py), as ``make lite`` builds it, plus copies
of chapter 1 and chapter 5 (Chinese) and chapter 1 (English), each with one cell of this test's own appended, which
prints a few of the chapter's numbers as JSON. It is served by ``python -m http.server`` on 127.0.0.1; each chapter
opens in a page of its own (all at once: their Pyodide kernels start side by side), runs every cell in Pyodide, and
the test waits for that printed line, not for the page load. The same notebooks run on the desktop edition meanwhile
(nbclient, this Python, with numpy, matplotlib, torch and OR-Tools; recordings replayed there too, so that a
measured timing is the same measurement on both sides), and the numbers must be equal. It also checks that each
edition speaks its language, that the recorded runs say so, that moving a slider redraws the SVG figure, and that
every request the pages, their workers and the service worker made went to 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout, expect

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = REPO / "course" / "chapters"
pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

TAG = "CHAPTER-NUMBERS"
# The numbers each checked chapter prints at its end (its own variables, after all its cells ran).
NUMBERS = {
    "01_bubble": "{'util': util, 'gap0': gap0, 'gpipe': [gp.makespan, gp.bubble_ratio], 'min_m': min_m, "
                 "'fastest': fastest, 'gflops': gflops[fastest], 'best_m': best_m, 'best_ms': makespans[best_m]}",
    "05_zero_bubble": "{'err_dx': err_dx, 'err_split': err_split, 'zero_at': zero_at, 'ratio_sim': ratio_sim, "
                      "'ratio_measured': ratio_measured, 'heuristic': [heur.makespan, heur.lower_bound], "
                      "'reproduced': reproduced}",
}
# (site path, source notebook, a sentence of its edition's output, the recording its note names)
CHECKED = [
    ("checked/01_bubble.ipynb", CHAPTERS / "01_bubble.ipynb", "整条流水线用了", "matmul-timing"),
    ("checked/05_zero_bubble.ipynb", CHAPTERS / "05_zero_bubble.ipynb", "两次运行的梯度", "zb-h1-emulated"),
    ("checked/en/01_bubble.ipynb", CHAPTERS / "en" / "01_bubble.ipynb", "The pipeline takes", "matmul-timing"),
]

# The first image after the slider in its cell (JupyterLab shows image/svg+xml as an <img>); null until loaded.
FIGURE_BELOW_JS = """slider => {
    const img = [...slider.closest('.jp-Cell').querySelectorAll('.jp-OutputArea-output img')]
        .find(i => slider.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_FOLLOWING);
    return img && img.complete && img.naturalWidth > 0 ? img.src : null;
}"""


# The desktop run hides OR-Tools: none of the numbers compared comes from the exact method, and CP-SAT's proofs
# would take minutes (chapter 5 runs them in full in tests/test_chapters.py).
NO_ORTOOLS = """import sys
class _NoOrTools:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "ortools":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _NoOrTools())"""


def checked_copy(source: Path, dest: Path, first: str | None = None) -> None:
    """The chapter with one cell appended that prints its numbers (and ``first`` as a cell before its own)."""
    nb = nbformat.read(source, as_version=4)
    stem = nb.metadata["course"]["chapter"]
    nb.cells.append(nbformat.v4.new_code_cell(f"import json as _json\nprint({TAG!r}, _json.dumps({NUMBERS[stem]}))"))
    if first is not None:
        nb.cells.insert(0, nbformat.v4.new_code_cell(first))
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)


def desktop_numbers(path: Path) -> dict:
    """Run the notebook on the desktop edition (this Python: numpy, matplotlib, torch), recordings replayed; its
    printed numbers."""
    code = ("import sys; from course.book import execute; from pathlib import Path; "
            "nb, _ = execute(Path(sys.argv[1])); "
            f"print(next(l for c in nb.cells for o in c.get('outputs', []) for l in o.get('text', '').splitlines() "
            f"if l.startswith({TAG!r})))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=400,
                          env={**os.environ, "COURSE_RECORDINGS": "1"})
    assert done.returncode == 0, f"{path} failed on the desktop: {done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1][len(TAG) + 1:])


def build_site(base: Path) -> Path:
    """The site as make lite builds it, plus the checked chapters (``checked/``), in ``base/site``."""
    for target, source, _, _ in CHECKED:
        checked_copy(source, base / target)
    t0 = time.monotonic()
    built = subprocess.run([sys.executable, str(REPO / "lite" / "build.py"), "--out", str(base / "site"),
                            "--add", str(base / "checked")], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    print(f"\n[lite] built in {time.monotonic() - t0:.0f} s: {built.stdout.strip()}")
    return base / "site"


def serve_site(site: Path):
    """Serve the built ``site`` on 127.0.0.1; yield its URL."""
    # port 0: the OS picks a free one and the server says which (a port picked here and freed could be taken by a
    # parallel test's gloo or TCPStore socket before the server binds it)
    server = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "-d",
                               str(site)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        said = server.stdout.readline()     # "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/) ..."
        match = re.search(r" port (\d+) ", said)
        assert match, f"python -m http.server did not say its port: {said!r}"
        url = f"http://127.0.0.1:{match.group(1)}"
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{url}/jupyter-lite.json", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        server.kill()
        server.wait()


@pytest.fixture(scope="module")
def site(tmp_path_factory, request):
    """The site (``lite_build``, built once for this file and test_lite_chapters.py) served on 127.0.0.1, and the
    desktop runs of the checked notebooks (started first, so that they run beside the build)."""
    base = tmp_path_factory.mktemp("lite-desktop")
    for target, source, _, _ in CHECKED:
        checked_copy(source, base / target, first=NO_ORTOOLS)
    pool = ThreadPoolExecutor(max_workers=1)           # one at a time: the machine also builds and browses
    desktop = {target: pool.submit(desktop_numbers, base / target) for target, *_ in CHECKED}
    try:
        for url in serve_site(request.getfixturevalue("lite_build")):
            yield url, desktop
    finally:
        pool.shutdown(cancel_futures=True)


def outputs(page, mime: str) -> list[str]:
    return page.locator(f'.jp-OutputArea-output[data-mime-type="{mime}"]').all_text_contents()   # off-screen cells too


def printed(page, tag: str):
    line = next(ln for text in outputs(page, "application/vnd.jupyter.stdout") for ln in text.splitlines()
                if ln.startswith(tag + " "))
    return json.loads(line[len(tag) + 1:])


STARTED_JS = "() => [...document.querySelectorAll('.jp-InputPrompt')].some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))"


def _dialog(page) -> str:
    """The text of the dialog open in the page, or ""."""
    dialog = page.locator(".jp-Dialog")
    return " ".join(dialog.first.inner_text().split()) if dialog.count() else ""


def run_all(page) -> None:
    """Run > Run All Cells, again if no cell has started: a click while the notebook is still settling is lost.

    A dialog in the way is named in the failure, except JupyterLite's kernel choice, which is accepted with the
    kernel it offers (the site has one, Pyodide's)."""
    page.locator(".jp-NotebookPanel").wait_for(timeout=90_000)
    for _ in range(3):
        text = _dialog(page)
        if text:
            if "select kernel" not in text.lower():
                raise AssertionError(f"a dialog is in the way of Run All: {text!r}")
            page.locator(".jp-Dialog .jp-mod-accept").first.click()
        try:
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").click(timeout=10_000)
            page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click(timeout=10_000)
            page.wait_for_function(STARTED_JS, timeout=20_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")    # close the menu if it is still open
    raise AssertionError(f"Run All Cells started no cell (dialog: {_dialog(page)!r})")


def test_the_chapters_run_offline_in_the_browser(site, chromium, screenshots):
    url, desktop = site
    requests: list[str] = []
    failed: list[str] = []
    t0 = time.monotonic()
    contexts, pages = [], []
    for target, *_ in CHECKED:
        # a browser context each: its own storage, so no page restores another's open notebooks or kernels
        context = chromium.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
        context.set_default_timeout(30_000)
        context.on("request", lambda r: requests.append(r.url))   # pages, workers and the service worker
        page = context.new_page()
        page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        page.goto(f"{url}/lab/index.html?path={target}")
        contexts.append(context)
        pages.append(page)
    for page in pages:     # every page loads first: their kernels start side by side
        run_all(page)
    ran = {}
    for page, (target, _, sentence, recording) in zip(pages, CHECKED):
        name = target.replace("/", "-")
        last = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]',
                            has_text=f"{TAG} {{")
        try:
            last.wait_for(timeout=240_000)
        except PlaywrightTimeout:
            page.screenshot(path=screenshots / f"lite-{name}-timeout.png")
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
            raise AssertionError(f"{target}: no numbers after {time.monotonic() - t0:.0f} s; errors: "
                                 f"{errors.all_inner_texts()[:1]}; stderr: "
                                 f"{outputs(page, 'application/vnd.jupyter.stderr')}; screenshot "
                                 f"lite-{name}-timeout.png") from None
        ran[target] = time.monotonic() - t0
        page.screenshot(path=screenshots / f"lite-{name}.png", full_page=False)
        expect(page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")).to_have_count(0)
        # stderr holds nothing but the exact search's one line saying OR-Tools is missing
        from course.search import NO_EXACT
        stray = [t for t in outputs(page, "application/vnd.jupyter.stderr") if NO_EXACT not in t]
        assert stray == [], f"{target}: unexpected stderr {stray}"
        markdown = "\n".join(outputs(page, "text/markdown"))
        assert sentence in markdown, f"{target}: its edition's text {sentence!r} is not in its output"
        assert f"python -m course.recordings run {recording}" in markdown and "recorded run" in markdown, \
            f"{target}: no note saying that {recording} is a recording, with its command"

        # the numbers are the desktop edition's (numpy, matplotlib, torch and OR-Tools there)
        browser = printed(page, TAG)
        assert browser == desktop[target].result(timeout=400), f"{target}: browser {browser} vs desktop"
        if target == CHECKED[0][0]:
            print(f"\n[lite] chapter 1 numbers (browser = desktop): {browser}")

    # a slider of chapter 1 redraws its SVG
    page = pages[0]
    slider = page.locator(".widget-slider").first
    slider.scroll_into_view_if_needed()
    before = page.wait_for_function(FIGURE_BELOW_JS, arg=slider.element_handle()).json_value()
    assert before.startswith("data:image/svg+xml")
    slider.locator(".noUi-handle").first.press("ArrowRight")
    redrawn = f"([s, old]) => {{ const src = ({FIGURE_BELOW_JS})(s); return src && src !== old; }}"
    page.wait_for_function(redrawn, arg=[slider.element_handle(), before])
    after = page.evaluate(FIGURE_BELOW_JS, slider.element_handle())
    assert after.startswith("data:image/svg+xml") and after != before
    page.screenshot(path=screenshots / "lite-slider.png")

    hosts = sorted({urllib.parse.urlparse(u).hostname for u in requests if not u.startswith(("data:", "blob:"))})
    print("[lite] printed numbers after " + ", ".join(f"{t} {s:.0f} s" for t, s in ran.items()))
    print(f"[lite] {len(requests)} requests to hosts {hosts}; failed: {failed}")
    assert hosts == ["127.0.0.1"], f"the page reached beyond 127.0.0.1: {hosts}"
    for context in contexts:
        context.close()
