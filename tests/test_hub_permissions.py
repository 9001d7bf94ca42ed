"""The hub's file permissions, checked as the hub's own system users (instructor/hub/).

The grader account releases ch01 through the exchange, both demo students fetch and submit it with nbgrader's own
commands and the hub's nbgrader settings, the grader collects.  Then student B, as itself, tries to read what it
must not: student A's submission and working copy, the release's hidden tests wherever they are (the grader's
course directory, the gradebook, this clone's exercises and solutions, its git history).  The hub's JupyterHub
does not run here (tests/browser/test_hub_cycle.py drives it); nbgrader is told not to ask it who takes the course.
"""

import ast
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "instructor" / "hub"))
import hub  # noqa: E402  (instructor/hub/hub.py)

pytestmark = [pytest.mark.hub, pytest.mark.timeout(600)]
STUDENT_A, STUDENT_B = hub.STUDENTS
NO_HUB = "--Authenticator.plugin_class=nbgrader.auth.NoAuthPlugin"   # who takes the course: not asked here


def nbgrader(run_as, user: str, *args, hub_env: dict, cwd: Path, role: str):
    env = {**hub_env, "PATH": f"{hub.PYTHON.parent}:/usr/bin:/bin", "HOME": f"/home/{user}",
           "JUPYTER_CONFIG_PATH": f"{hub.JUPYTER_CONFIG / role}:{hub.JUPYTER_CONFIG}"}
    result = run_as(user, hub.PYTHON, "-m", "nbgrader", *args, NO_HUB, env=env, cwd=cwd)
    assert result.returncode == 0, f"{user}: nbgrader {' '.join(args)}\n{result.stdout}{result.stderr[-3000:]}"


def hidden_test_names() -> set[str]:
    """The names of ch01's hidden test functions (in practice/problems/<slug>/test_hidden.py) that no public test
    of the chapter shares."""
    cells = json.loads((REPO / "instructor" / "source" / "ch01" / "ch01.ipynb").read_text())["cells"]
    defined = lambda code: {n.name for n in ast.parse(textwrap.dedent(code)).body  # noqa: E731
                            if isinstance(n, ast.FunctionDef)}
    hidden, public = set(), set()
    for source in ("".join(cell["source"]) for cell in cells):
        if "### BEGIN HIDDEN TESTS" in source:
            before, rest = source.split("### BEGIN HIDDEN TESTS")
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


def probe(run_as, user: str, targets: list[tuple[str, Path]]) -> dict:
    """For each (list|read, path): what ``user`` gets, "read" or "denied"."""
    result = run_as(user, hub.PYTHON, "-c", PROBE, json.dumps([(k, str(p)) for k, p in targets]), env={})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_student_reads_neither_another_submission_nor_the_hidden_tests(hub_env, run_as):
    course, exchange = Path(hub_env["PP_HUB_COURSE"]), Path(hub_env["NBGRADER_EXCHANGE"])
    homes = Path(hub_env["PP_HUB_HOMES"])
    nbgrader(run_as, hub.GRADER, "generate_assignment", "ch01", "--force", hub_env=hub_env, cwd=course, role="grader")
    nbgrader(run_as, hub.GRADER, "release_assignment", "ch01", "--force", hub_env=hub_env, cwd=course, role="grader")
    for student in (STUDENT_A, STUDENT_B):
        for step in ("fetch_assignment", "submit"):
            nbgrader(run_as, student, step, "ch01", hub_env=hub_env, cwd=homes / student, role="student")
    nbgrader(run_as, hub.GRADER, "collect", "ch01", hub_env=hub_env, cwd=course, role="grader")

    inbound = exchange / hub.COURSE / "inbound"
    submission_of = {s: next(p for p in inbound.iterdir() if p.name.startswith(f"{s}+ch01+")) for s in hub.STUDENTS}
    release = exchange / hub.COURSE / "outbound" / "ch01" / "ch01.ipynb"
    own_copy = homes / STUDENT_B / hub.COURSE / "ch01" / "ch01.ipynb"
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
        ("read" if (REPO / ".git").is_file() else "list", REPO / ".git"),   # a worktree's is a file
        ("list", REPO),
    ]
    may = [("read", release), ("read", own_copy), ("read", submission_of[STUDENT_B] / "ch01.ipynb"),
           ("read", REPO / "course" / "checks.py"), ("read", hub.JUPYTER_CONFIG / "nbgrader_config.py")]
    got = probe(run_as, STUDENT_B, must_not + may)
    assert {str(p): got[str(p)] for _, p in must_not} == {str(p): "denied" for _, p in must_not}
    assert {str(p): got[str(p)] for _, p in may} == {str(p): "read" for _, p in may}

    # the release B may read holds no hidden test; the grader can read both submissions (it collected them)
    released = release.read_text(encoding="utf-8")
    hidden = hidden_test_names()
    assert hidden and "BEGIN HIDDEN TESTS" not in released and not [n for n in hidden if f"def {n}(" in released]
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(hub.STUDENTS)
    assert os.stat(submission_of[STUDENT_A] / "ch01.ipynb").st_mode & 0o777 == 0o640
