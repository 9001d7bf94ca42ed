"""Shared fixtures: ``hub_env``, a private setting of the course's local JupyterHub (instructor/hub/) for one test,
and ``run_as``, a command as one of its accounts.

The hub's accounts are real system users (instructor/hub/provision.py creates them once per machine); everything
else is the test's own, in a folder the accounts can pass through: the exchange, the grader's course directory, one
working directory per login and the hub's state.  Two sessions on one machine share only the accounts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HUB = REPO / "instructor" / "hub"


def _run_as(user: str, *cmd, env: dict, cwd: Path | str = "/", timeout: float = 300) -> subprocess.CompletedProcess:
    """``cmd`` as the system user ``user`` (runuser), with ``env`` only (nothing of this process's environment)."""
    return subprocess.run(["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                           *map(str, cmd)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def run_as():
    """``run_as(user, *cmd, env=..., cwd=..., timeout=...)``: a command as one of the hub's system users."""
    return _run_as


@pytest.fixture
def hub_env():
    """The hub's variables for one test (see instructor/hub/hub.py): its own exchange, course directory, working
    directories and hub state, made by ``provision.py --setting-only``.  The accounts come from
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
