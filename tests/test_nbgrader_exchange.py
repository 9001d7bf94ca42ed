"""The nbgrader exchange as instructor/nbgrader_config.py sets it: $NBGRADER_EXCHANGE (nbgrader's own default
otherwise), a release and a fetch through it, a clear message for a user who cannot use the folder, and feedback
refused by name for submissions that did not come through `nbgrader submit`.  Real `nbgrader` commands, in a
temporary copy of the course directory."""

import ctypes
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"
NBGRADER = str(Path(sys.executable).parent / "nbgrader")
COURSE_ID = "pipeline-parallelism"


def nbgrader(*args, cwd, exchange, env=None, preexec_fn=None, user=None):
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
           "NBGRADER_EXCHANGE": str(exchange), **(env or {})}
    return subprocess.run([NBGRADER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=preexec_fn, user=user)


@pytest.fixture(scope="module")
def course():
    """ch01 generated in a copy of instructor/ under a folder every user can enter (pytest's tmp_path is private)."""
    base = Path(tempfile.mkdtemp(prefix="nbgrader-exchange-"))
    os.chmod(base, 0o755)
    course = base / "course"
    course.mkdir()
    shutil.copy(INSTRUCTOR / "nbgrader_config.py", course)
    shutil.copytree(INSTRUCTOR / "source" / "ch01", course / "source" / "ch01")
    made = nbgrader("generate_assignment", "ch01", cwd=course, exchange=base / "unused")
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    yield course
    shutil.rmtree(base, ignore_errors=True)


def test_the_default_is_nbgraders_own_and_the_variable_overrides_it(monkeypatch):
    from nbgrader.exchange.default import Exchange
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.delenv("NBGRADER_EXCHANGE", raising=False)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(INSTRUCTOR)).load_config()
    assert config.Exchange.root == Exchange.class_traits()["root"].default_value == "/usr/local/share/nbgrader/exchange"
    monkeypatch.setenv("NBGRADER_EXCHANGE", "/srv/somewhere")
    assert PyFileConfigLoader("nbgrader_config.py", path=str(INSTRUCTOR)).load_config().Exchange.root == \
        "/srv/somewhere"
    assert config.CourseDirectory.root == str(INSTRUCTOR)    # wherever nbgrader runs from


def test_release_and_fetch_go_through_the_exchange_folder(course):
    exchange = course.parent / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    released = nbgrader("release_assignment", "ch01", cwd=course, exchange=exchange)
    assert released.returncode == 0, released.stderr[-2000:]
    assert (exchange / COURSE_ID / "outbound" / "ch01" / "ch01.ipynb").is_file()
    # a student, elsewhere, with the course's configuration on the path (as the course's JupyterLab has it)
    home = course.parent / "student"
    home.mkdir()
    fetched = nbgrader("fetch_assignment", "ch01", "--course", COURSE_ID, cwd=home, exchange=exchange,
                       env={"HOME": str(home), "JUPYTER_CONFIG_PATH": str(course)})
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    assert (home / "ch01" / "ch01.ipynb").is_file()


def _unshare_user():
    """preexec_fn: a new user namespace, so that root runs the command as an unprivileged user (nobody)."""
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:   # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")


def as_an_ordinary_user(folder: Path) -> dict:
    """Make ``folder`` unwritable for an ordinary user, and say how to run a command as one: the test's own user
    when it is not root; as root, root in a user namespace of its own (no privilege outside), or else nobody."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o555)
        return {}
    os.chown(folder, 65534, 65534)
    os.chmod(folder, 0o755)
    try:
        subprocess.run(["true"], preexec_fn=_unshare_user, check=True)
        return {"preexec_fn": _unshare_user}
    except (OSError, subprocess.SubprocessError):
        return {"user": 65534, "env": {"HOME": str(folder.parent)}}


@pytest.mark.parametrize("case", ["missing", "not writable"])
def test_a_user_who_cannot_use_the_exchange_gets_one_clear_message(course, case):
    locked = course.parent / f"locked-{case.replace(' ', '-')}"
    locked.mkdir()
    exchange = locked / "exchange" if case == "missing" else locked
    how = as_an_ordinary_user(locked)
    try:
        result = nbgrader("release_assignment", "ch01", cwd=course, exchange=exchange, **how)
    finally:
        os.chmod(locked, stat.S_IRWXU)
    said = result.stdout + result.stderr
    assert result.returncode != 0, said
    expected = (f"The exchange folder {exchange} does not exist and user " if case == "missing"
                else f"The exchange folder {exchange} is not writable by user ")
    lines = [line for line in said.splitlines() if expected in line]
    assert len(lines) == 1 and "chmod ugo+rwx" in lines[0] and "NBGRADER_EXCHANGE" in lines[0], said[-3000:]
    assert "Traceback" not in said


def test_release_feedback_refuses_hand_placed_submissions_by_name(course):
    exchange = course.parent / "exchange-feedback"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    for student in ("alice", "bob"):
        folder = course / "feedback" / student / "ch01"
        folder.mkdir(parents=True)
        (folder / "ch01.html").write_text(f"<p>feedback for {student}</p>")
    # bob submitted with `nbgrader submit` (whose timestamp and secret the feedback step copies); alice's
    # notebook was placed by hand (zip_collect, an LMS download)
    (course / "feedback" / "bob" / "ch01" / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
    (course / "feedback" / "bob" / "ch01" / "submission_secret.txt").write_text("bob's secret")
    result = nbgrader("release_feedback", "ch01", cwd=course, exchange=exchange)
    said = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in said, said[-3000:]
    assert "Feedback not released for alice: their submissions were not made with `nbgrader submit`" in said
    released = list((exchange / COURSE_ID / "feedback").glob("*.html"))
    assert [p.read_text() for p in released] == ["<p>feedback for bob</p>"]
