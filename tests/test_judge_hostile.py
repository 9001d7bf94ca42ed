"""Hostile submissions against the judge's checker/learner split: each gets an honest verdict within its time limit
and leaves no process and no directory behind (checked with psutil and the judge's temporary directory)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[1]
JUDGE = REPO / "practice" / "judge.py"
HANG_GUARD = 120   # seconds: a judge run longer than this has hung (not a speed target)


def leftovers(root: Path) -> list[str]:
    """Live processes whose working directory is under ``root`` (every learner process starts in one)."""
    found = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and p.cwd().startswith(str(root)):
                found.append(f"{p.pid} {' '.join(p.cmdline())[:80]}")
        except psutil.Error:
            pass
    return found


def judge(tmp_path: Path, slug: str, source: str, timeout: float = 10, *args) -> tuple[dict, str, float]:
    """Grade ``source`` for ``slug``; return {file:test: (verdict, message)}, stdout, seconds.  Asserts the judge
    cleaned up: nothing left in its temporary directory, no process running in it.  The answers here are about
    bubble-ratio's ``bubble_ratio``; its other function gets a stand-in that calls it, so every test meets it."""
    source = with_spans(slug, source)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    path = tmp_path / "submission_under_test.py"
    path.write_text(source)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(JUDGE), "--timeout", str(timeout), *args, "test", slug, path, "--json"],
                          capture_output=True, text=True, timeout=HANG_GUARD, env={**os.environ, "TMPDIR": str(tmp)})
    elapsed = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)   # --json: stdout is one JSON document
    time.sleep(0.2)
    assert list(tmp.iterdir()) == [], "the judge left a temporary directory"
    assert leftovers(tmp) == [], "the judge left a learner's process running"
    return {f"{r['file']}:{r['name']}": (r["verdict"], r["message"]) for r in data["results"]}, data["output"], elapsed


def with_spans(slug: str, source: str) -> str:
    if slug == "bubble-ratio" and "def bubble_ratio" in source and "def bubble_from_spans" not in source:
        source += "\n\ndef bubble_from_spans(spans):\n    return -bubble_ratio(4, 8)   # never a ratio\n"
    return source


def verdicts(got: dict) -> set[str]:
    return {v for v, _ in got.values()}


# ---- what the checks rely on cannot be reached from the learner's process --------------------------------------

WRONG = "def bubble_ratio(p, m, v=1):\n    return 0.5\n"

PATCHES = {
    "course_checks_helpers": "import course.checks as c, math\nc._isclose = c._first_difference = lambda *a, **k: None\n"
                             "c.assert_close = c.assert_equal = c.assert_raises = lambda *a, **k: None\n"
                             "math.isclose = lambda *a, **k: True\n",
    "test_module_helpers": "import sys\nfor m in list(sys.modules.values()):\n"
                           "    if getattr(m, '__name__', '').startswith('test_'):\n"
                           "        m.assert_close = m.assert_raises = lambda *a, **k: None\n",
    "profile_hook_swaps_builtins": "import builtins, sys\nreal = builtins.isinstance\n"
                                   "def hook(frame, event, arg):\n"
                                   "    builtins.isinstance = lambda *a: True\n"
                                   "sys.setprofile(hook)\n",
}


@pytest.mark.parametrize("name", sorted(PATCHES))
def test_patches_in_the_learner_process_change_nothing(name, tmp_path):
    got, _, elapsed = judge(tmp_path, "bubble-ratio", PATCHES[name] + WRONG)
    print(f"{name}: {elapsed:.1f} s")
    assert "passed" not in verdicts(got), got
    assert got["hidden:test_closed_form_against_the_simulator"][0] in ("failed", "error", "crashed"), got   # or it broke its own process


def test_patched_course_class_method_changes_nothing(tmp_path):
    source = ("import course.timeline, course.plan\n"
              "course.plan.Plan.validate = lambda self: self\n"
              "course.timeline.Timeline.makespan = property(lambda self: 0.0)\n"
              "class Deadlock(Exception):\n    pass\n"
              "def simulate(ranks, f, b, comm=0.0):\n    return [[(0.0, 0.0)] * len(r) for r in ranks]\n")
    got, _, elapsed = judge(tmp_path, "event-simulator", source)
    print(f"class method: {elapsed:.1f} s")
    assert verdicts(got) == {"failed"}, got


@pytest.mark.live   # imports torch in two processes (~10 s)
def test_patched_torch_changes_nothing(tmp_path):
    source = ("import torch\n"
              "torch.sub = lambda a, b, **k: torch.zeros_like(a)\n"
              "torch.Tensor.__sub__ = lambda a, b: torch.zeros_like(a)\n"
              "torch.allclose = lambda *a, **k: True\n"
              "def linear_input_grad(grad_output, weight):\n    return torch.zeros(grad_output.shape[:-1] + weight.shape[1:])\n"
              "def linear_weight_grad(grad_output, x):\n"
              "    return torch.zeros(grad_output.shape[-1], x.shape[-1]), torch.zeros(grad_output.shape[-1])\n")
    got, _, elapsed = judge(tmp_path, "linear-backward-split", source, 60)
    print(f"torch patch: {elapsed:.1f} s")
    assert verdicts(got) == {"failed"}, got


def test_the_checker_and_judge_are_out_of_reach(tmp_path):
    """Their memory (where a key would live), /proc views and pipes are closed to the learner; ptrace refused."""
    source = f"""import ctypes, json, os, psutil
judge = psutil.Process(os.getppid())
def is_checker(c):
    try:
        return any("checker.py" in a for a in c.cmdline())
    except psutil.Error:   # the other test file's checker may just have finished
        return False
targets = [judge] + [c for c in judge.children() if is_checker(c)]
report = {{"targets": len(targets)}}
for p in targets:
    for what in ("maps", "mem", "environ"):
        try:
            open(f"/proc/{{p.pid}}/{{what}}", "rb").read(1)
            report[f"{{p.pid}}/{{what}}"] = "open"
        except OSError:
            pass
    try:
        fds = os.listdir(f"/proc/{{p.pid}}/fd")
    except OSError:
        fds = []
    for fd in fds:
        try:
            os.close(os.open(f"/proc/{{p.pid}}/fd/{{fd}}", os.O_WRONLY))
            report[f"{{p.pid}}/fd/{{fd}}"] = "open"
        except OSError:
            pass
    if ctypes.CDLL(None).ptrace(16, p.pid, 0, 0) == 0:
        report[f"{{p.pid}}/ptrace"] = "attached"
print("REPORT" + json.dumps(report), flush=True)
""" + WRONG
    got, output, _ = judge(tmp_path, "bubble-ratio", source)
    reports = [json.loads(line.split("REPORT", 1)[1]) for line in output.splitlines() if "REPORT" in line]
    assert reports and all(set(r) == {"targets"} and r["targets"] >= 2 for r in reports), reports   # all refused
    assert got["public:test_closed_form_examples"][0] == "failed"


# ---- containment ----------------------------------------------------------------------------------------------

def test_setsid_escapers_are_found_and_killed(tmp_path):
    source = ("import os, time\n"
              "def escape():\n"
              "    if os.fork() == 0:\n"
              "        os.setsid()\n"
              "        if os.fork() == 0:\n"
              "            print(f'ESCAPED {os.getpid()}', flush=True)\n"
              "            time.sleep(3600)\n"
              "        os._exit(0)\n"
              "escape()\n" + WRONG)
    got, output, elapsed = judge(tmp_path, "bubble-ratio", source)
    print(f"setsid: {elapsed:.1f} s")
    assert got["public:test_closed_form_examples"][0] == "failed"
    escaped = [int(line.split("ESCAPED ", 1)[1]) for line in output.splitlines() if "ESCAPED " in line]
    assert len(escaped) == 2 and not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                                         for p in escaped)


def test_a_child_writing_forever_cannot_hold_the_judge(tmp_path):
    source = ("import os, sys\n"
              "if os.fork() == 0:\n"
              "    while True:\n"
              "        for fd in range(1, 1024):\n"
              "            try:\n"
              "                os.write(fd, b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x10{\"ok\": 1.0}' * 100)\n"
              "            except OSError:\n"
              "                pass\n" + WRONG)
    got, output, elapsed = judge(tmp_path, "bubble-ratio", source, 8)
    print(f"writer: {elapsed:.1f} s")
    assert "passed" not in verdicts(got), got
    assert elapsed < 2 * (8 + 5) + 10 and len(output) < 20000


def test_fork_bomb_is_bounded(tmp_path):
    source = ("import os, time\n"
              "def bubble_ratio(p, m, v=1):\n"
              "    for _ in range(5000):\n"
              "        try:\n"
              "            if os.fork() == 0:\n"
              "                os.setsid()\n"
              "                time.sleep(60)\n"
              "                os._exit(0)\n"
              "        except OSError:\n"
              "            time.sleep(0.01)\n"
              "    return 0.5\n")
    got, _, elapsed = judge(tmp_path, "bubble-ratio", source)
    print(f"fork bomb: {elapsed:.1f} s")
    assert verdicts(got) == {"crashed"}, got
    assert "too many processes" in got["public:test_closed_form_examples"][1]


def grade_with_caps(tmp_path: Path, source: str, caps: dict, timeout: float) -> tuple[list, float]:
    """Grade ``source`` for bubble-ratio with smaller caps, in a child process (grading makes its process a
    subreaper for good: not the test runner's).  Returns [(verdict, message)] and seconds; asserts the cleanup."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    path = tmp_path / "hog.py"
    path.write_text(with_spans("bubble-ratio", source))
    script = (f"import json, sys, time\nfrom concurrent.futures import ThreadPoolExecutor\n"
              f"sys.path.insert(0, {str(REPO)!r})\nfrom practice import exercises, sandbox\n"
              f"for k, v in {caps!r}.items():\n    setattr(sandbox, k, v)\n"
              f"problem = exercises.find(exercises.load_problems(), 'bubble-ratio')\nproblem.timeout = {timeout}\n"
              f"start = time.monotonic()\nwith ThreadPoolExecutor(2) as pool:\n"
              f"    g = sandbox.grade(problem, {str(path)!r}, pool=pool)\nsandbox.sweep()\n"
              f"print(json.dumps([time.monotonic() - start, [[r.verdict, r.message] for r in g.results]]))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD,
                          env={**os.environ, "TMPDIR": str(tmp)})
    assert proc.returncode == 0, proc.stderr
    seconds, results = json.loads(proc.stdout.strip().splitlines()[-1])
    time.sleep(0.2)
    assert leftovers(tmp) == [] and list(tmp.iterdir()) == []
    return results, seconds


def test_memory_across_processes_is_bounded(tmp_path):
    source = ("import os, time\n"
              "def bubble_ratio(p, m, v=1):\n"
              "    for _ in range(4):\n"
              "        if os.fork() == 0:\n"
              "            block = bytearray(120 << 20)\n"   # 120 MiB each, resident (zeroed pages are written)
              "            for i in range(0, len(block), 4096):\n"
              "                block[i] = 1\n"
              "            time.sleep(60)\n"
              "    time.sleep(60)\n")
    results, seconds = grade_with_caps(tmp_path, source, {"MAX_RESIDENT": 300 << 20}, 20)
    print(f"memory: {seconds:.1f} s")
    assert seconds < 15
    assert results[0][0] == "crashed" and "out of memory" in results[0][1], results


def test_memory_of_test_files_running_at_once_is_bounded(tmp_path):
    source = "import time\nblock = bytearray(200 << 20)\nfor i in range(0, len(block), 4096):\n    block[i] = 1\ntime.sleep(60)\n"
    # each file stays under its own cap, not both together; the file that is not killed sleeps until its timeout
    results, seconds = grade_with_caps(tmp_path, source, {"ALL_RESIDENT": 250 << 20}, 6)
    print(f"memory of two files: {seconds:.1f} s")
    assert seconds < 6 + 3 + 5 and "passed" not in {v for v, _ in results}
    assert any("同时运行" in m for _, m in results), results


def test_output_before_a_crash_is_shown(tmp_path):
    source = "import os\ndef bubble_ratio(p, m, v=1):\n    print('about to leave', p)\n    os._exit(3)\n"
    got, output, _ = judge(tmp_path, "bubble-ratio", source)
    first = got["public:test_spans_of_a_tiny_pipeline"]
    assert "passed" not in verdicts(got) and first[0] == "crashed" and "exit code 3" in first[1], got
    assert "exit code 0" not in str(got)         # the judge once reaped the learner itself, and Popen then said 0
    assert "about to leave 4" in output          # the stand-in bubble_from_spans calls bubble_ratio(4, 8) first


def test_interrupted_judge_leaves_nothing(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    path = tmp_path / "slow.py"
    path.write_text(with_spans("bubble-ratio", "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
                               "    time.sleep(3600)\ndef bubble_ratio(p, m, v=1):\n    time.sleep(3600)\n"))
    for sig in (signal.SIGTERM, signal.SIGINT):
        proc = subprocess.Popen([sys.executable, str(JUDGE), "test", "bubble-ratio", path], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)})
        deadline = time.monotonic() + 30
        while len(leftovers(tmp)) < 4 and time.monotonic() < deadline:   # 2 learners, each with its sleeper
            time.sleep(0.1)
        assert len(leftovers(tmp)) >= 4
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 130 and "interrupted" in err
        time.sleep(0.2)
        assert leftovers(tmp) == [] and list(tmp.iterdir()) == []


# ---- "don't call the library", at run time --------------------------------------------------------------------

RUNTIME_ROUTES = {
    "importlib": "import importlib\n"
                 "def one_f_one_b_order(p, m, stage):\n"
                 "    lib = importlib.import_module('cou' + 'rse.sched' + 'ules')\n"
                 "    return lib.build('1f1b', p, m).rank_tokens(stage)\n",
    "kept_in_a_container": "import importlib\n"
                           "TOOLS = {'build': getattr(importlib.import_module('course.sched' + 'ules'), 'bu' + 'ild')}\n"
                           "def one_f_one_b_order(p, m, stage):\n"
                           "    return TOOLS['build']('1f1b', p, m).rank_tokens(stage)\n",
}


@pytest.mark.parametrize("name", sorted(RUNTIME_ROUTES))
def test_library_calls_are_refused_at_run_time(name, tmp_path):
    got, _, _ = judge(tmp_path, "one-f-one-b-order", RUNTIME_ROUTES[name])
    assert "passed" not in verdicts(got), got
    assert all("must not use" in m for v, m in got.values()), got


def test_killing_the_checker_is_no_pass(tmp_path):
    source = ("import os, signal, psutil\n"
              "for c in psutil.Process(os.getppid()).children():\n"
              "    if any('checker.py' in a for a in c.cmdline()):\n"
              "        os.kill(c.pid, signal.SIGKILL)\n" + WRONG)
    got, _, _ = judge(tmp_path, "bubble-ratio", source)
    assert "passed" not in verdicts(got), got


@pytest.mark.skipif(os.geteuid() != 0, reason="the read-only view needs a mount namespace (root)")
def test_files_outside_its_directory_are_read_only(tmp_path):
    """The on-disk route (rewrite the judge, the library or torch for a later import) is closed as root."""
    target = REPO / "practice" / "checker.py"
    before = target.read_bytes()
    source = (f"import os\nrefused = []\n"
              f"for path in ({str(target)!r}, {str(tmp_path / 'outside')!r}):\n"
              f"    try:\n"
              f"        open(path, 'ab').close()\n"
              f"    except OSError as e:\n"
              f"        refused.append(e.errno)\n"
              f"def bubble_ratio(p, m, v=1):\n"
              f"    if refused != [30, 30]:\n"   # EROFS twice
              f"        raise RuntimeError(refused)\n"
              f"    return (p - 1) / (v * m + p - 1)\n")
    got, _, _ = judge(tmp_path, "bubble-ratio", source)
    assert got["public:test_closed_form_examples"][0] == "passed", got
    assert target.read_bytes() == before and not (tmp_path / "outside").exists()


def test_start_never_writes_through_a_symlink(tmp_path):
    workspace, outside = tmp_path / "workspace", tmp_path / "elsewhere" / "planted.py"
    workspace.mkdir()
    (workspace / "bubble-ratio.py").symlink_to(outside)   # dangling: exists() is False
    proc = subprocess.run([sys.executable, str(JUDGE), "--workspace", workspace, "start", "bubble-ratio"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "symlink" in proc.stderr
    assert not outside.exists()


@pytest.mark.live   # torch in two processes, twice (~30 s)
def test_autograd_kept_in_a_dict_is_refused_but_importing_torch_is_fine(tmp_path):
    cheat = ("import importlib\nimport torch\n"
             "TOOLS = {'g': getattr(importlib.import_module('torch.' + 'auto' + 'grad'), 'gr' + 'ad')}\n"
             "def linear_input_grad(grad_output, weight):\n"
             "    x = torch.zeros(grad_output.shape[:-1] + (weight.shape[1],), dtype=weight.dtype, requires_grad=True)\n"
             "    with torch.enable_grad():\n"
             "        return TOOLS['g'](x @ weight.T, x, grad_output)[0]\n"
             "def linear_weight_grad(grad_output, x):\n"
             "    return grad_output.flatten(0, -2).T @ x.flatten(0, -2), grad_output.flatten(0, -2).sum(0)\n")
    got, _, _ = judge(tmp_path, "linear-backward-split", cheat, 60)
    assert verdicts(got) == {"failed"} and all("torch.autograd.grad" in m for _, m in got.values()), got
    honest = "import torch\nimport torch.nn.functional as F\n" + (REPO / "solutions/linear-backward-split.py").read_text()
    got, _, _ = judge(tmp_path, "linear-backward-split", honest, 60)
    assert verdicts(got) == {"passed"}, got
