"""A whole assignment cycle on the course's JupyterHub (instructor/hub/), in Chromium, everything on 127.0.0.1.

The instructor releases ch01 from the formgrader; student A logs in, fetches it in the Assignments tab, types the
reference solutions into its solution cells, saves and submits; student B submits it blank.  The instructor collects,
grades with ``instructor/grade.py`` as the grader account (autograde and regrade), and releases feedback; each
student fetches it and reads their own score: A full marks, B zero.  Nothing is lost: both submissions are in the
gradebook and in the regrade's CSV.  Then, as student B's own system user, the file permissions: B reads neither
A's submission nor the release's hidden tests, wherever they are.  Every account is a real system user
(provision.py); the hub, its exchange, its course directory and the users' working directories are this module's
own.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import nbformat
import psutil
import pytest
from playwright.sync_api import expect

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "instructor" / "hub"))
import hub  # noqa: E402  (instructor/hub/hub.py)

pytestmark = [pytest.mark.browser, pytest.mark.hub, pytest.mark.timeout(900)]
STUDENT_A, STUDENT_B = hub.STUDENTS
INSTRUCTOR = hub.INSTRUCTORS[0]
SCREENSHOTS = REPO / "screenshots" / "browser"
SLUGS = {"bubble_ratio": "bubble-ratio", "choose_m": "choose-m"}   # ch01's solution cells
POINTS = 30                                                         # ch01's total

# The test's hub: instructor/hub/jupyterhub_config.py, with JupyterLab set as the other browser tests set it.
OVERLAY = """\
load_subconfig({main!r})  # noqa: F821
c.Spawner.environment["JUPYTERLAB_SETTINGS_DIR"] = lambda spawner: f"{homes}/{{spawner.user.name}}/.lab-settings"
"""


class Hub:
    """JupyterHub started from the course's configuration, with the variables of ``hub_env``."""

    def __init__(self, hub_env: dict, lab_settings: dict):
        self.env, self.password = hub_env, secrets.token_urlsafe(12)
        self.url = f"http://127.0.0.1:{hub.free_port()}"
        state, homes = Path(hub_env["PP_HUB_STATE"]), Path(hub_env["PP_HUB_HOMES"])
        state.mkdir(mode=0o700, exist_ok=True)
        for user in hub.INSTRUCTORS + hub.STUDENTS:
            for plugin, values in lab_settings.items():
                path = homes / user / ".lab-settings" / f"{plugin}.jupyterlab-settings"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(values))
        config = state / "test_jupyterhub_config.py"
        config.write_text(OVERLAY.format(main=str(hub.HUB / "jupyterhub_config.py"), homes=homes))
        self.log = state / "jupyterhub.log"
        self._log = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [str(hub.PYTHON.parent / "jupyterhub"), "-f", str(config)], cwd=state, stdout=self._log,
            stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **hub_env, "PP_HUB_PORT": self.url.rsplit(":", 1)[1], "PP_HUB_PASSWORD": self.password})
        try:
            self._wait(f"/services/{hub.COURSE}/", timeout=180)
        except BaseException:   # a hub that did not come up leaves no proxy, service or server behind
            self.stop()
            raise

    def _wait(self, path: str, timeout: float) -> None:
        """Until the proxy routes ``path`` (the course service comes up last)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterHub exited with code {self.proc.returncode}:\n{self.log_tail()}")
            try:
                urllib.request.urlopen(f"{self.url}{path}", timeout=5)
                return
            except urllib.error.HTTPError as e:
                if e.code in (302, 401, 403, 405):   # answered: the route exists
                    return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{self.url}{path} did not answer within {timeout} s:\n{self.log_tail()}")

    def log_tail(self, n: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])

    def stop(self, wait_s: float = 30) -> None:
        """Stop the hub (it stops the proxy, the service and every user's server); kill what is left after
        ``wait_s``, with a warning that shows the end of its log (a slow stop is no failure, but its cause is
        worth reading)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                warnings.warn(f"JupyterHub did not stop within {wait_s} s of SIGTERM and was killed; its log "
                              f"ends:\n{self.log_tail(25)}", stacklevel=2)
        for p in psutil.process_iter(["environ"]):   # servers of this hub: they carry its exchange
            try:
                if (p.info["environ"] or {}).get("NBGRADER_EXCHANGE") == self.env["NBGRADER_EXCHANGE"]:
                    p.kill()
            except psutil.Error:
                pass
        self._log.close()


@pytest.fixture(scope="module")
def course_hub(hub_env, lab_settings):
    server = Hub(hub_env, lab_settings)
    yield server
    server.stop()


def login(chromium, course_hub: Hub, user: str, then: str):
    """A fresh browser context (its own cookies) logged in as ``user``, on ``then``."""
    page = chromium.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN").new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{course_hub.url}/hub/login?next={then}")
    page.fill("#username_input", user)
    page.fill("#password_input", course_hub.password)
    page.click("#login_submit")
    return page


class Formgrader:
    """The course service's Manage Assignments page, as the instructor."""

    def __init__(self, page):
        self.page = page
        page.wait_for_url(re.compile(r"/formgrader/manage_assignments"))

    def do(self, assignment: str, step: str, timeout_s: float = 120) -> None:
        """Click ``step``'s button in ``assignment``'s row (assign, release, collect, generate-feedback,
        release-feedback) and wait for nbgrader's answer."""
        self.page.reload()
        row = self.page.locator("tr", has=self.page.locator("td.name a", has_text=re.compile(f"^{assignment}$")))
        row.locator(f"td.{step} a").click()
        answer = self.page.locator("#success-modal, #error-modal")
        answer.wait_for(timeout=timeout_s * 1000)
        text = answer.inner_text()
        assert answer.get_attribute("id") == "success-modal", f"formgrader {step} {assignment}:\n{text[-3000:]}"
        answer.locator("button[data-dismiss=modal]").first.click()
        expect(answer).to_have_count(0)


class Student:
    """A student's JupyterLab on the hub, driven from its menus and its Assignments tab."""

    def __init__(self, page, user: str):
        self.page, self.user = page, user
        page.wait_for_url(re.compile(f"/user/{user}/lab"), timeout=180_000)   # spawned, JupyterLab loaded
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
        page.locator('.lm-Menu-item[data-command="nbgrader:open-assignment-list"]').click()
        self.assignments = page.locator(".lm-TabBar-tab", has_text="Assignments")

    def fetch(self, assignment: str) -> None:
        self.page.locator("#released_assignments_list .list_item", has_text=assignment) \
            .get_by_role("button", name="Fetch").click()
        expect(self.page.locator("#fetched_assignments_list")).to_contain_text(assignment)

    def answer(self, assignment: str, notebook: Path) -> None:
        """Open the fetched notebook from the Assignments tab, type the reference solution into each solution
        cell, save."""
        item = self.page.locator("#fetched_assignments_list .list_item", has_text=assignment).first
        item.locator("a.assignment-notebooks-link").click()
        item.locator(".nested_list_item a", has_text=assignment).click()
        nb = nbformat.read(notebook, as_version=4)
        cells = self.page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        expect(cells).to_have_count(len(nb.cells))
        for index, cell in enumerate(nb.cells):
            slug = SLUGS.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
            if cell.metadata.get("nbgrader", {}).get("solution") and slug:
                cells.nth(index).locator(".cm-content").click()
                self.page.keyboard.press("Control+a")    # the cell's text
                self.page.keyboard.insert_text((REPO / "solutions" / f"{slug}.py").read_text().strip())
                self.page.keyboard.press("Escape")
        self.page.keyboard.press("Control+s")
        expect(self.page.locator(".jp-Document.jp-mod-dirty, .lm-TabBar-tab.jp-mod-dirty")).to_have_count(0)

    def submit(self, assignment: str) -> None:
        self.assignments.click()
        self.page.locator("#fetched_assignments_list .list_item", has_text=assignment).first \
            .get_by_role("button", name="Submit").click()
        expect(self.page.locator("#submitted_assignments_list")).to_contain_text(assignment)

    def feedback_score(self, assignment: str) -> str:
        """Fetch the feedback in the Assignments tab, open it, and read its 'Score: x / y' line."""
        self.assignments.click()
        self.page.locator("#refresh_assignments_list").click()
        submitted = self.page.locator("#submitted_assignments_list")
        expect(submitted).to_contain_text("(feedback available to fetch)")
        submitted.get_by_role("button", name="Fetch Feedback").click()
        submitted.get_by_text("(view feedback)").click()   # the file browser opens the feedback's folder
        self.page.locator(".jp-DirListing-item", has_text=f"{assignment}.html").dblclick()
        body = self.page.frame_locator(".jp-HTMLViewer iframe").locator("body")
        expect(body).to_contain_text("Score:")
        self.page.screenshot(path=SCREENSHOTS / f"hub-{self.user}-feedback.png")
        return re.search(r"Score: [\d.]+ / [\d.]+", body.inner_text()).group(0)


@pytest.fixture(scope="module")
def cycle(chromium, course_hub, hub_env, run_as):
    """The whole cycle, once for the module: each student's score as their feedback shows it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    course, homes = Path(hub_env["PP_HUB_COURSE"]), Path(hub_env["PP_HUB_HOMES"])
    started, pages = time.monotonic(), {}
    try:
        pages[INSTRUCTOR] = login(chromium, course_hub, INSTRUCTOR, f"/services/{hub.COURSE}/formgrader")
        formgrader = Formgrader(pages[INSTRUCTOR])
        formgrader.do("ch01", "assign")
        formgrader.do("ch01", "release")

        for user in hub.STUDENTS:   # both servers start at once
            pages[user] = login(chromium, course_hub, user, "/hub/spawn")
        students = {user: Student(pages[user], user) for user in hub.STUDENTS}
        for student in students.values():
            student.fetch("ch01")
        fetched = homes / STUDENT_A / hub.COURSE / "ch01" / "ch01.ipynb"
        students[STUDENT_A].answer("ch01", fetched)
        typed = {c.metadata.nbgrader["grade_id"]: c.source for c in nbformat.read(fetched, as_version=4).cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
        assert typed == {gid: (REPO / "solutions" / f"{slug}.py").read_text().strip() for gid, slug in SLUGS.items()}
        for student in students.values():
            student.submit("ch01")

        formgrader.do("ch01", "collect")
        env = {**hub_env, "PATH": f"{hub.PYTHON.parent}:/usr/bin:/bin", "HOME": f"/home/{hub.GRADER}"}
        graded = run_as(hub.GRADER, hub.PYTHON, REPO / "instructor" / "grade.py", "ch01", "--course-dir", course,
                        "--jobs", "2", env=env, cwd=course, timeout=600)
        print(graded.stdout)
        assert graded.returncode == 0, graded.stdout + graded.stderr[-3000:]
        formgrader.do("ch01", "generate-feedback")
        formgrader.do("ch01", "release-feedback")

        scores = {user: student.feedback_score("ch01") for user, student in students.items()}
    except Exception:
        for user, page in pages.items():
            page.screenshot(path=SCREENSHOTS / f"hub-{user}-failure.png")
        print(course_hub.log_tail())
        raise
    print(f"hub cycle: {time.monotonic() - started:.0f} s")
    return scores


def test_each_student_reads_their_own_score_in_the_feedback(cycle):
    for user, score in cycle.items():
        print(f"{user}: {score}")
    assert cycle == {STUDENT_A: f"Score: {POINTS:.1f} / {POINTS:.1f}", STUDENT_B: f"Score: 0.0 / {POINTS:.1f}"}


def test_every_submission_is_in_the_gradebook_and_the_regrade(cycle, hub_env):
    from nbgrader.api import Gradebook

    course = Path(hub_env["PP_HUB_COURSE"])
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        book = {s.student_id: s.score for s in gb.assignment_submissions("ch01")}
    assert book == {STUDENT_A: POINTS, STUDENT_B: 0}
    with open(course / "regrade-ch01.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    regraded = {}
    for r in rows:
        regraded[r["student"]] = regraded.get(r["student"], 0) + float(r["regrade"])
    assert regraded == {STUDENT_A: POINTS, STUDENT_B: 0} and len(rows) == len(hub.STUDENTS) * len(SLUGS), rows


def hidden_test_names() -> set[str]:
    """The names of ch01's hidden test functions (from practice/problems/<slug>/test_hidden.py) that no public test
    of the chapter shares."""
    cells = nbformat.read(REPO / "instructor" / "source" / "ch01" / "ch01.ipynb", as_version=4).cells
    defined = lambda code: {n.name for n in ast.parse(textwrap.dedent(code)).body  # noqa: E731
                            if isinstance(n, ast.FunctionDef)}
    hidden, public = set(), set()
    for cell in cells:
        if "### BEGIN HIDDEN TESTS" in cell.source:
            before, rest = cell.source.split("### BEGIN HIDDEN TESTS")
            hidden |= defined(rest.split("### END HIDDEN TESTS")[0])
            public |= defined(before)
    return hidden - public


PROBE = """\
import json, os, sys
verdicts = {}
for kind, path in json.loads(sys.argv[1]):
    try:
        if kind == "list":
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
        verdicts[path] = "read"
    except PermissionError:
        verdicts[path] = "denied"
print(json.dumps(verdicts))
"""


def test_a_student_reads_neither_another_submission_nor_the_hidden_tests(cycle, hub_env, run_as):
    """As student B's own system user, after the cycle: what it may and may not open."""
    course, exchange = Path(hub_env["PP_HUB_COURSE"]), Path(hub_env["NBGRADER_EXCHANGE"])
    homes = Path(hub_env["PP_HUB_HOMES"])
    inbound = exchange / hub.COURSE / "inbound"
    submission_of = {s: next(p for p in inbound.iterdir() if p.name.startswith(f"{s}+ch01+")) for s in hub.STUDENTS}
    release = exchange / hub.COURSE / "outbound" / "ch01" / "ch01.ipynb"
    git = REPO / ".git"
    must_not = [
        ("list", inbound),                                            # whose submissions are there
        ("list", submission_of[STUDENT_A]),
        ("read", submission_of[STUDENT_A] / "ch01.ipynb"),           # even knowing its name
        ("read", homes / STUDENT_A / hub.COURSE / "ch01" / "ch01.ipynb"),   # A's working copy
        ("list", course),                                             # the grader's course directory
        ("read", course / "gradebook.db"),
        ("read", course / "submitted" / STUDENT_A / "ch01" / "ch01.ipynb"),
        ("read", course / "source" / "ch01" / "ch01.ipynb"),
        ("read", REPO / "instructor" / "source" / "ch01" / "ch01.ipynb"),   # the same, in this clone
        ("read", REPO / "practice" / "problems" / "bubble-ratio" / "test_hidden.py"),
        ("read", REPO / "solutions" / "bubble-ratio.py"),
        ("read" if git.is_file() else "list", git),                   # a worktree's .git is a file
        ("list", REPO),
    ]
    may = [("read", release), ("read", homes / STUDENT_B / hub.COURSE / "ch01" / "ch01.ipynb"),
           ("read", submission_of[STUDENT_B] / "ch01.ipynb"), ("read", REPO / "course" / "checks.py"),
           ("read", hub.JUPYTER_CONFIG / "nbgrader_config.py")]
    result = run_as(STUDENT_B, hub.PYTHON, "-c", PROBE, json.dumps([(k, str(p)) for k, p in must_not + may]), env={})
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert {str(p): got[str(p)] for _, p in must_not} == {str(p): "denied" for _, p in must_not}
    assert {str(p): got[str(p)] for _, p in may} == {str(p): "read" for _, p in may}
    # the release B may read holds no hidden test
    released = release.read_text(encoding="utf-8")
    hidden = hidden_test_names()
    assert hidden and "BEGIN HIDDEN TESTS" not in released and not [n for n in hidden if f"def {n}(" in released]
    assert os.stat(submission_of[STUDENT_A] / "ch01.ipynb").st_mode & 0o777 == 0o640
