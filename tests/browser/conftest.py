"""Fixtures for the browser tests: a private JupyterLab server and Debian's Chromium driven by Playwright; for the
hub's test, ``hub_env`` (a private setting of the course's local JupyterHub, instructor/hub/) and ``run_as`` (a
command as one of its accounts, which are real system users).

JupyterLab runs from this environment on 127.0.0.1 (free port, random token) with every per-user directory in a
temporary folder, so nothing from ~/.jupyter leaks in and nothing is written back to the repository: the chapters
are copied, and the browser runs them there.  Nothing may reach the internet: news, update checks and the PyPI
extension manager are switched off, and Chromium gets the flags a closed network needs.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright

REPO = Path(__file__).resolve().parents[2]
HUB = REPO / "instructor" / "hub"
CHAPTERS = REPO / "course" / "chapters"
SCREENSHOTS = REPO / "screenshots" / "browser"   # git-ignored
CHROMIUM = Path("/usr/bin/chromium")             # Debian's build; Playwright must never download one

# User settings for the private JupyterLab (one file per plugin, as JupyterLab stores them).
LAB_SETTINGS = {
    # No news feed, no update check: both would fetch from the internet.
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    # Attach every cell to the DOM, so that widgets and figures far down the page exist for the test to find;
    # start the notebook's own kernel without the "Select Kernel" dialog a fresh profile shows.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none", "autoStartDefaultKernel": True},
    # The copied chapter is scratch, but a save would still race the test's own reads of the page.
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}

# Chromium flags for a closed network: without the networking ones it keeps trying to reach Google's servers.
CHROMIUM_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-gpu",
    "--disable-dev-shm-usage",   # CI containers often have a tiny /dev/shm
] + (["--no-sandbox"] if os.geteuid() == 0 else [])   # Chromium's sandbox refuses to run as root


class Lab:
    """A running JupyterLab server: its URL, token, notebook folder and log.

    ``command`` starts it another way than plain ``jupyterlab`` on ``root`` (e.g. ``python -m course.lab``, which
    configures the root itself); the address, the token and the private per-user folders are the same."""

    def __init__(self, root: Path, state: Path, command: list[str] | None = None, env: dict | None = None):
        self.root, self.state = root, state
        self.token = secrets.token_hex(16)
        self.url = ""   # known once the server says which port the OS gave it (_wait_ready)
        self.log = state / "jupyterlab.log"
        env = {**os.environ, **(env or {})}
        for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                         ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython")]:
            env[var] = str(state / sub)
            (state / sub).mkdir(parents=True, exist_ok=True)
        env.pop("MPLBACKEND", None)   # the kernel must use its inline backend
        for plugin, values in LAB_SETTINGS.items():
            path = state / "settings" / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        # port 0: the OS picks a free port as the server binds it (one picked here and freed could be taken by a
        # parallel test's gloo or TCPStore socket first); the server writes it to its runtime file
        address = ["--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0",
                   f"--IdentityProvider.token={self.token}",
                   "--LabApp.extension_manager=readonly"]   # the default one queries pypi.org
        cmd = [*command, *address] if command else [
            sys.executable, "-m", "jupyterlab", *address, f"--ServerApp.root_dir={root}",
            "--ServerApp.allow_root=True",   # CI runs as root
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True"]   # window.jupyterapp: read cell outputs from the model
        self._log_file = open(self.log, "wb")
        self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        try:
            self._wait_ready(timeout=60)
        except BaseException:
            self.stop()
            raise

    def api(self, path: str, method: str = "GET", body=None):
        """Call the server's REST API; ``body`` is sent as JSON.  An HTTP error raises urllib's HTTPError."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}{path}", method=method, data=data,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self.proc.returncode}:\n{self.log_tail()}")
            if not self.url:
                info = sorted((self.state / "runtime").glob("jpserver-*.json"))
                try:
                    self.url = f"http://127.0.0.1:{json.loads(info[0].read_text())['port']}" if info else ""
                except (ValueError, KeyError):
                    pass   # being written
            try:
                if self.url:
                    self.api("/api/status")
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not answer on {self.url} within {timeout} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Shut the server down with its kernels; kill whatever of them is still there after 15 s."""
        try:
            started = psutil.Process(self.proc.pid).children(recursive=True)   # the kernels
        except psutil.NoSuchProcess:
            started = []
        if self.proc.poll() is None:
            try:
                if self.url:
                    self.api("/api/shutdown", method="POST")   # shuts the kernels down too
            except (urllib.error.URLError, OSError):
                pass
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for p in started:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        self._log_file.close()


@pytest.fixture(scope="module")     # stopped after the browser tests: later tests count this process's children
def lab(tmp_path_factory):
    """JupyterLab serving a scratch copy of course/chapters (the browser runs cells; the repository stays clean)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(CHAPTERS, root / "chapters", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_src"))
    server = Lab(root, base / "state")
    yield server
    server.stop()


def _need_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing; run tests/browser/setup.sh (installs Debian's chromium)")


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium, for a test that needs one browser context per user (``chromium.new_context()``)."""
    _need_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def lab_settings():
    """LAB_SETTINGS: JupyterLab user settings for a browser test, by plugin."""
    return LAB_SETTINGS


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    _need_chromium()
    with sync_playwright() as pw:
        # A persistent context on a fresh folder: an explicit, empty profile for every run.
        context = pw.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000},
            locale="zh-CN")   # a learner's browser; also makes Chromium pick Simplified Chinese glyphs
        context.set_default_timeout(30_000)
        yield context
        context.close()


@pytest.fixture
def page(browser_context, lab):
    """A new tab; ``page.console_errors`` collects the console errors and uncaught exceptions it sees."""
    page = browser_context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(
        f"{m.text} (at {m.location.get('url', '?')}:{m.location.get('lineNumber', '?')})"))
    page.on("pageerror", lambda e: page.console_errors.append(f"uncaught: {e}"))
    yield page
    page.close()
    for session in lab.api("/api/sessions"):   # shut its kernels down: the next test starts its own
        lab.api(f"/api/sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="session")
def lite_build(tmp_path_factory) -> Path:
    """The browser edition built once for test_lite.py and test_lite_chapters.py (one worker runs both: their
    group), as ``make lite`` builds it plus test_lite.py's checked chapters: the site's folder."""
    from test_lite import build_site

    return build_site(tmp_path_factory.mktemp("lite"))


@pytest.fixture(scope="session")
def screenshots():
    return SCREENSHOTS


# The open notebook as JupyterLab's own model sees it (window.jupyterapp): the kernel's state, the code cells still
# queued or running, those never run, and the errors raised.  The DOM cannot tell an error from stderr text.
STATE_JS = """() => {
    const panel = window.jupyterapp?.shell.currentWidget;
    if (!panel?.content?.model || !panel.sessionContext) return null;
    const cells = [...panel.content.model.cells].filter(c => c.type === 'code');
    const outputs = cells.flatMap(c => Array.from({length: c.outputs.length}, (_, i) => c.outputs.get(i).toJSON()));
    const kernel = panel.sessionContext.session?.kernel;
    return {
        kernel: !kernel ? 'none' : kernel.connectionStatus === 'connected' ? kernel.status : kernel.connectionStatus,
        running: cells.filter(c => c.executionState === 'running').length,
        unexecuted: cells.filter(c => c.executionCount === null).length,
        errors: outputs.filter(o => o.output_type === 'error').map(o => `${o.ename}: ${o.evalue}`),
    };
}"""


def _when(condition: str) -> str:
    """A page predicate on STATE_JS's result ``s``."""
    return f"() => {{ const s = ({STATE_JS})(); return !!s && ({condition}); }}"


class Notebook:
    """One notebook open in JupyterLab in ``page``, driven the way a learner would: menus, keys, the mouse."""

    def __init__(self, page, lab: Lab, path: str):
        self.page, self.lab, self.path = page, lab, path
        # ?reset: a fresh workspace, not the tabs the previous test left open.
        page.goto(f"{lab.url}/lab/tree/{path}?reset&token={lab.token}")
        self.panel = page.locator(".jp-NotebookPanel")
        self.panel.wait_for()
        # The kernel starts with the notebook (the toolbar's indicator says "idle" even before there is one).
        page.wait_for_function(_when("s.kernel === 'idle'"), timeout=60_000, polling=250)

    def state(self) -> dict:
        return self.page.evaluate(STATE_JS)

    def menu(self, title: str, command: str) -> None:
        """Click a main-menu entry, e.g. menu("Run", "runmenu:run-all")."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=title).click()
        self.page.locator(f'.lm-Menu-item[data-command="{command}"]').click()

    def run_all(self, timeout_s: float = 120) -> dict:
        """Run > Run All Cells, wait until the kernel is idle with nothing queued; return the final state.

        Clicking queues every cell at once (all "running"); a cell that raises makes the kernel drop the rest."""
        self.menu("Run", "runmenu:run-all")
        try:
            self.page.wait_for_function(_when("s.kernel === 'idle' && s.running === 0"),
                                        timeout=timeout_s * 1000, polling=250)
        except PlaywrightTimeout:
            shot = SCREENSHOTS / f"{Path(self.path).stem}-timeout.png"
            self.page.screenshot(path=shot)
            raise AssertionError(f"{self.path}: Run All not finished after {timeout_s} s: {self.state()}; "
                                 f"screenshot {shot}") from None
        return self.state()


@pytest.fixture
def open_notebook(page, lab):
    return lambda path: Notebook(page, lab, path)


def _run_as(user: str, *cmd, env: dict, cwd: Path | str = "/", timeout: float = 300) -> subprocess.CompletedProcess:
    """``cmd`` as the system user ``user`` (runuser), with ``env`` only (nothing of this process's environment)."""
    return subprocess.run(["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                           *map(str, cmd)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def run_as():
    """``run_as(user, *cmd, env=..., cwd=..., timeout=...)``: a command as one of the hub's system users."""
    return _run_as


@pytest.fixture(scope="module")
def hub_env():
    """The hub's variables for one test module (see instructor/hub/hub.py): its own exchange, course directory, working
    directories and hub state, in a folder the hub's accounts may pass through, made by
    ``provision.py --setting-only``.  The accounts (shared by every test run on the machine) come from
    ``provision.py --system-only``, which ``make test`` runs first."""
    if os.geteuid() != 0:
        pytest.fail("the hub tests run real system users: run them as root (or skip them: pytest -m 'not hub')")
    root = Path(tempfile.mkdtemp(prefix="pp-hub-"))
    root.chmod(0o755)   # the hub's accounts pass through to their own folders
    env = {"NBGRADER_EXCHANGE": str(root / "exchange"), "PP_HUB_COURSE": str(root / "course"),
           "PP_HUB_HOMES": str(root / "homes"), "PP_HUB_STATE": str(root / "state")}
    result = subprocess.run([sys.executable, str(HUB / "provision.py"), "--setting-only"], capture_output=True,
                            text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, (result.stdout + result.stderr + "\n(the hub's accounts: sudo "
                                    ".venv/bin/python instructor/hub/provision.py --system-only)")
    yield env
    shutil.rmtree(root, ignore_errors=True)
