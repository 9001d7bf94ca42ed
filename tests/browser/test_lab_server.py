"""`make lab` on a fresh clone, through the running server's own APIs (no browser): the learner folder is served,
a chapter opened and saved there leaves the clone clean, the tracked chapter refuses the save, a Lab terminal runs
the chapters' judge command as written, kernels run this environment's Python in the copy's folder, no news
pop-up, nbgrader's extensions load without an error.

The clone is this working tree's files (tracked and new, not ignored) committed into a fresh repository, so the
test sees the code under test; ``python -m course.lab`` is what ``make lab`` runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
from pathlib import Path

import psutil
import pytest
from conftest import Lab

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
CHAPTER = "workspace/chapters/01_bubble.ipynb"


def git(*args, cwd) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def fresh_clone(to: Path) -> Path:
    files = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).split("\0")
    for rel in filter(None, files):
        if (REPO / rel).is_file():                      # a file deleted in the working tree is not copied
            (to / rel).parent.mkdir(parents=True, exist_ok=True)
            (to / rel).write_bytes((REPO / rel).read_bytes())
            os.chmod(to / rel, os.stat(REPO / rel).st_mode)
    git("init", "-q", cwd=to)
    git("add", "-A", cwd=to)
    git("-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-qm", "clone", cwd=to)
    return to


@pytest.fixture(scope="module")
def learner_lab(tmp_path_factory):
    clone = fresh_clone(tmp_path_factory.mktemp("clone"))
    # what `make lab ARGS='--no-browser ...'` runs, in the clone (its own course package first on the path)
    server = Lab(clone, tmp_path_factory.mktemp("lab-state"), command=[sys.executable, "-m", "course.lab"],
                 env={"PYTHONPATH": str(clone)})
    server.clone = clone
    yield server
    server.stop()


def test_make_lab_serves_the_learner_folder_and_loads_nbgrader_without_an_error(learner_lab):
    listed = {item["name"] for item in learner_lab.api("/api/contents/workspace/chapters")["content"]}
    chapters = {p.name for p in (learner_lab.clone / "course" / "chapters").iterdir() if not p.name.startswith("_")}
    assert chapters <= listed, listed
    log = learner_lab.log.read_text(errors="replace")
    assert "copied " in log                                          # course.lab's first-run copies
    assert not re.search(r"^\[E ", log, re.M), log[-3000:]           # nbgrader's formgrader included
    assert "No nbgrader_config.py file found" not in log
    assert learner_lab.api("/api/contents/practice")["type"] == "directory"   # the judge is reachable too


def test_the_news_pop_up_is_off(learner_lab):
    import urllib.request

    with urllib.request.urlopen(f"{learner_lab.url}/lab?token={learner_lab.token}", timeout=30) as r:
        page = r.read().decode()
    config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                  page, re.S).group(1))
    assert "@jupyterlab/apputils-extension:announcements" in config["disabledExtensions"]


def test_a_chapter_saved_through_lab_leaves_the_clone_clean(learner_lab):
    path = f"/api/contents/{CHAPTER}"
    model = learner_lab.api(path + "?content=1")
    model["content"]["cells"][0]["source"] += "\n\nMy own note."
    saved = learner_lab.api(path, "PUT", {"type": "notebook", "format": "json", "content": model["content"]})
    assert saved["path"] == CHAPTER
    assert "My own note." in (learner_lab.clone / CHAPTER).read_text(encoding="utf-8")
    # the tracked chapter, opened by mistake: its save is refused, naming the learner's copy
    with pytest.raises(urllib.error.HTTPError) as refused:
        learner_lab.api("/api/contents/course/chapters/01_bubble.ipynb", "PUT",
                        {"type": "notebook", "format": "json", "content": model["content"]})
    assert refused.value.code == 403 and CHAPTER in refused.value.read().decode()
    clone = learner_lab.clone
    assert git("status", "--porcelain", cwd=clone) == ""
    for check in (["course/chapters/_src/build.py", "--check"], ["instructor/generate.py", "--check"],
                  ["practice/judge.py", "sync", "--check"]):        # what `make check` verifies first
        result = subprocess.run([sys.executable, *check], cwd=clone, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (check, result.stdout[-2000:], result.stderr[-2000:])


async def _terminal(lab: Lab, name: str, line: str, until: str, timeout: float) -> str:
    from tornado.websocket import websocket_connect

    ws = await websocket_connect(f"ws://{lab.url.removeprefix('http://')}/terminals/websocket/{name}?token={lab.token}")
    try:
        await ws.write_message(json.dumps(["stdin", line + "\r"]))
        out, deadline = "", time.monotonic() + timeout
        while until not in out and time.monotonic() < deadline:
            try:
                message = await asyncio.wait_for(ws.read_message(), deadline - time.monotonic())
            except TimeoutError:
                break
            if message is None:
                break
            kind, *data = json.loads(message)
            if kind == "stdout":
                out += data[0]
        return out
    finally:
        ws.close()


def test_a_lab_terminal_runs_the_chapters_judge_command_as_written(learner_lab):
    name = learner_lab.api("/api/terminals", "POST")["name"]
    try:
        where = asyncio.run(_terminal(learner_lab, name, "echo PWD=$(pwd) PY=$(command -v python)", "PY=/", 30))
        assert f"PWD={learner_lab.clone}" in where, where              # the repository root
        assert f"PY={Path(sys.executable).parent}/python" in where, where   # this environment's Python
        said = asyncio.run(_terminal(learner_lab, name, "python practice/judge.py start bubble-ratio",
                                     "practice/judge.py test bubble-ratio", 120))
    finally:
        learner_lab.api(f"/api/terminals/{name}", "DELETE")
    assert "(created) workspace/bubble-ratio.py" in said and "Traceback" not in said, said
    started = learner_lab.clone / "workspace" / "bubble-ratio.py"
    assert started.read_text() == (learner_lab.clone / "practice/problems/bubble-ratio/starter.py").read_text()
    assert git("status", "--porcelain", cwd=learner_lab.clone) == ""


def test_a_chapters_kernel_runs_this_python_in_the_copys_folder(learner_lab):
    session = learner_lab.api("/api/sessions", "POST", {"path": CHAPTER, "type": "notebook",
                                                        "kernel": {"name": "python3"}})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            kernels = [p for p in psutil.Process(learner_lab.proc.pid).children(recursive=True)
                       if "ipykernel_launcher" in " ".join(p.cmdline())]
            if kernels:
                break
            time.sleep(0.3)
        assert len(kernels) == 1, kernels
        assert kernels[0].cmdline()[0] == sys.executable
        assert Path(kernels[0].cwd()) == learner_lab.clone / "workspace" / "chapters"
    finally:
        learner_lab.api(f"/api/sessions/{session['id']}", "DELETE")
