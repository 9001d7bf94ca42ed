"""The course's local JupyterHub in one place: its accounts, groups and paths (read by jupyterhub_config.py,
provision.py and the tests).

Environment variables (all optional) move what a test or a second hub on the machine must not share:
``PP_HUB_PORT`` (default 8000), ``PP_HUB_STATE`` (the hub's database and secrets, default instructor/hub/state),
``PP_HUB_COURSE`` (the grader's course directory), ``NBGRADER_EXCHANGE`` (the exchange root, nbgrader's default
``/usr/local/share/nbgrader/exchange``), ``PP_HUB_HOMES`` (a folder holding one working directory per user, instead of
their home directories) and ``PP_HUB_PASSWORD`` (the demo accounts' shared password; default: a random one kept in
the state folder).
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from course.ports import free_port  # noqa: F401  (jupyterhub_config.py names the hub's ports with it)

HUB = Path(__file__).resolve().parent
REPO = HUB.parents[1]
COURSE = "pipeline-parallelism"                # nbgrader's course id; also the name of the course service
INSTRUCTORS = ["pp-instructor"]
STUDENTS = ["pp-student-a", "pp-student-b"]
GRADER = f"grader-{COURSE}"                    # the account that runs the course service (nbgrader's naming)
# nbgrader's groups: formgrade-<course> may use the formgrader, nbgrader-<course> takes the course
INSTRUCTOR_GROUP, STUDENT_GROUP = f"formgrade-{COURSE}", f"nbgrader-{COURSE}"

PYTHON_PREFIX = Path(sys.prefix)               # the environment every server of the hub runs
PYTHON = PYTHON_PREFIX / "bin" / "python"
JUPYTER_CONFIG = HUB / "jupyter"               # on every server's JUPYTER_CONFIG_PATH: nbgrader_config.py, ...
PROXY = HUB / "node_modules" / ".bin" / "configurable-http-proxy"
DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"


def exchange_root() -> Path:
    return Path(os.environ.get("NBGRADER_EXCHANGE", DEFAULT_EXCHANGE))


def course_directory() -> Path:
    return Path(os.environ.get("PP_HUB_COURSE", f"/home/{GRADER}/{COURSE}"))


def state_directory() -> Path:
    state = Path(os.environ.get("PP_HUB_STATE", HUB / "state"))
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    return state


def password() -> str:
    """The demo accounts' shared password: PP_HUB_PASSWORD, or one made once and kept in the state folder."""
    if os.environ.get("PP_HUB_PASSWORD"):
        return os.environ["PP_HUB_PASSWORD"]
    path = state_directory() / "demo-password"
    if not path.is_file():
        path.write_text(secrets.token_urlsafe(12))
        path.chmod(0o600)
    return path.read_text().strip()
