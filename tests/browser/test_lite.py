"""The browser edition: ``lite/build.py`` builds the JupyterLite site, Chromium runs a notebook in it, offline.

The site is built as ``make lite`` builds it, plus a notebook of this test's own (the real chapters 1 and 5 join
once they are converted to the browser's code paths).  It is served by ``python -m http.server`` on 127.0.0.1; the
page runs every cell in Pyodide, and the test waits for the printed output, not for the page load.  It checks the
numbers against this (desktop) Python, that moving a slider redraws the SVG figure, what the kernel sees of its
working directory (the chapters find their edition by reading their own notebook file), and that every request
the page, its workers and its service worker made went to 127.0.0.1.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

CELLS = [
    # what the kernel sees: its working directory, the notebook file beside it, the environment
    "import os, json\n"
    "meta = json.load(open('lite_check.ipynb'))['metadata']['course']\n"
    "print('KERNEL', json.dumps({'cwd': os.getcwd(), 'files': sorted(os.listdir('.')), 'meta': meta}))",
    # the standard-library path: simulator, search without OR-Tools, partition without numpy
    "from course.costs import Costs\nfrom course.partition import partition\nfrom course.schedules import build\n"
    "from course.search import search\nfrom course.sim import simulate\n"
    "tl = simulate(build('1f1b', 4, 8))\n"
    "res = search(4, 8, Costs(f=5, b=6, w=4, comm=1, w_mem=0.5), 4)\n"
    "print('NUMBERS', json.dumps([tl.makespan, tl.bubble_ratio, tl.peak_activations, res.makespan, "
    "res.lower_bound, partition([3, 1, 1, 1, 1, 1, 1, 4], 4).bottleneck]))",
    "from course import figure, plots\nfig, ax = figure.subplots(figsize=(8, 2.5))\nplots.gantt(tl, ax=ax)\n"
    "figure.show()",
    "from course.widgets import explore\n\n"
    "def lite_explorer(fig, m):\n    plots.gantt(simulate(build('1f1b', 4, m)), ax=fig.add_subplot())\n\n"
    "explore(lite_explorer, figsize=(8, 2.5), m=(1, 16, 8))",
    "from course import recordings\nlive = recordings.run('1f1b')\n"
    "print('RECORDED', json.dumps([live.grad_ok, live.max_abs_err, live.timeline.makespan, live.simulated.makespan]))",
]

# The first image after the slider in its cell (JupyterLab shows image/svg+xml as an <img>); null until loaded.
FIGURE_BELOW_JS = """slider => {
    const img = [...slider.closest('.jp-Cell').querySelectorAll('.jp-OutputArea-output img')]
        .find(i => slider.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_FOLLOWING);
    return img && img.complete && img.naturalWidth > 0 ? img.src : null;
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site as make lite builds it, with this test's notebook added; served on 127.0.0.1."""
    base = tmp_path_factory.mktemp("lite")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata = {"kernelspec": {"name": "python", "display_name": "Python (Pyodide)", "language": "python"},
                   "course": {"chapter": "lite_check", "lang": "en"}}
    nbformat.write(nb, base / "lite_check.ipynb")
    t0 = time.monotonic()
    built = subprocess.run([sys.executable, str(REPO / "lite" / "build.py"), "--out", str(base / "site"),
                            "--add", str(base / "lite_check.ipynb")], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    print(f"\n[lite] built in {time.monotonic() - t0:.0f} s: {built.stdout.strip()}")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port), "-d",
                               str(base / "site")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(f"{url}/jupyter-lite.json", timeout=2).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise
            time.sleep(0.2)
    yield url, base / "site"
    server.kill()
    server.wait()


def outputs(page, mime: str) -> list[str]:
    return page.locator(f'.jp-OutputArea-output[data-mime-type="{mime}"]').all_inner_texts()


def printed(page, tag: str):
    line = next(ln for text in outputs(page, "application/vnd.jupyter.stdout") for ln in text.splitlines()
                if ln.startswith(tag + " "))
    return json.loads(line[len(tag) + 1:])


def test_the_course_runs_offline_in_the_browser(site, browser_context, screenshots):
    url, root = site
    requests: list[str] = []
    browser_context.on("request", lambda r: requests.append(r.url))   # pages, workers and the service worker
    page = browser_context.new_page()
    failed = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    t0 = time.monotonic()
    page.goto(f"{url}/lab/index.html?path=lite_check.ipynb")
    panel = page.locator(".jp-NotebookPanel")
    panel.wait_for(timeout=90_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    # printed output of the last cell, not the page load: the kernel started, installed nothing, ran every cell
    last = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]',
                        has_text="RECORDED [")
    try:
        last.wait_for(timeout=180_000)
    except Exception:
        page.screenshot(path=screenshots / "lite-timeout.png")
        raise AssertionError(f"no output after {time.monotonic() - t0:.0f} s; stderr: "
                             f"{outputs(page, 'application/vnd.jupyter.stderr')}; screenshot lite-timeout.png")
    ran_s = time.monotonic() - t0
    page.screenshot(path=screenshots / "lite-end.png")
    assert outputs(page, "application/vnd.jupyter.stderr") == []
    expect(panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")).to_have_count(0)

    # the numbers are the desktop edition's (this process has numpy, matplotlib, torch, OR-Tools)
    from course import recordings
    from course.costs import Costs
    from course.partition import partition
    from course.schedules import build
    from course.search import search
    from course.sim import simulate

    tl = simulate(build("1f1b", 4, 8))
    res = search(4, 8, Costs(f=5, b=6, w=4, comm=1, w_mem=0.5), 4)
    desktop = [tl.makespan, tl.bubble_ratio, tl.peak_activations, res.makespan, res.lower_bound,
               partition([3, 1, 1, 1, 1, 1, 1, 4], 4).bottleneck]
    browser = printed(page, "NUMBERS")
    assert browser == desktop
    live = recordings.decode(recordings.load("1f1b")["result"])
    assert printed(page, "RECORDED") == [live.grad_ok, live.max_abs_err, live.timeline.makespan,
                                         live.simulated.makespan]
    notes = [t for t in outputs(page, "text/markdown") if "recorded run" in t]
    assert len(notes) == 1 and "python -m course.recordings run 1f1b" in notes[0]

    # the working directory is the notebook's folder on the browser's drive, and the notebook file is readable there
    kernel = printed(page, "KERNEL")
    assert kernel["cwd"] == "/drive" and "lite_check.ipynb" in kernel["files"] and "chapters" in kernel["files"]
    assert kernel["meta"] == {"chapter": "lite_check", "lang": "en"}

    # a slider redraws the SVG
    slider = panel.locator(".widget-slider").first
    before = page.wait_for_function(FIGURE_BELOW_JS, arg=slider.element_handle()).json_value()
    assert before.startswith("data:image/svg+xml")
    slider.locator(".noUi-handle").first.press("ArrowRight")
    redrawn = f"([s, old]) => {{ const src = ({FIGURE_BELOW_JS})(s); return src && src !== old; }}"
    page.wait_for_function(redrawn, arg=[slider.element_handle(), before])
    after = page.evaluate(FIGURE_BELOW_JS, slider.element_handle())
    assert after.startswith("data:image/svg+xml") and after != before
    page.screenshot(path=screenshots / "lite-slider.png")

    hosts = sorted({urllib.parse.urlparse(u).hostname for u in requests if not u.startswith(("data:", "blob:"))})
    print(f"[lite] printed output after {ran_s:.0f} s; numbers {browser}; recorded {printed(page, 'RECORDED')}")
    print(f"[lite] kernel working directory {kernel['cwd']}, files {kernel['files']}")
    print(f"[lite] {len(requests)} requests to hosts {hosts}; failed: {failed}")
    assert hosts == ["127.0.0.1"], f"the page reached beyond 127.0.0.1: {hosts}"
    page.close()
