"""Hostile submissions against the judge's checker/learner split and its walls (practice/contain.py), one test per
class of attack: each gets an honest verdict within its time limit and leaves nothing behind (no process, nothing
in the judge's temporary directory or in /dev/shm).

Where this machine cannot make namespaces (``contain.mode() == ""``), the tests of what the walls contain check
instead that the judge says so.  The classes that need a course and nbgrader are tested next to them: regrade input
handling, a poisoned installation and the honest variants in tests/test_regrade.py, the kernel writing the grader
in tests/test_nbgrader_autograde.py.  Attacks here only ever aim at processes of this test (found by its temporary
path), never at everything they could reach, so a broken wall fails a test and harms nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
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
sys.path.insert(0, str(REPO))
from practice import contain  # noqa: E402

CONTAINED = contain.mode()
TAG = "hostile-test"   # in the name of every file an attack writes outside its own directory


def leftovers(root: Path, since: float) -> list[str]:
    """Live processes of a learner: working under ``root`` (every learner process starts there), or, as root,
    running under a graded uid since ``since``."""
    found = []
    for p in psutil.process_iter(["pid", "status", "uids", "create_time"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            graded = p.info["uids"].real >= contain.UID_BASE and p.info["create_time"] >= since - 1
            if graded or p.cwd().startswith(str(root)):
                found.append(f"{p.pid} {' '.join(p.cmdline())[:80]}")
        except psutil.Error:
            pass
    return found


def shm_files() -> set[str]:
    return {name for name in os.listdir("/dev/shm") if TAG in name} if os.path.isdir("/dev/shm") else set()


def assert_nothing_left(tmp: Path, since: float) -> None:
    time.sleep(0.2)
    assert list(tmp.iterdir()) == [], "the judge left a temporary directory"
    assert leftovers(tmp, since) == [], "the judge left a learner's process running"
    assert shm_files() == set(), "a learner's file is left in /dev/shm"


def judge(tmp_path: Path, slug: str, source: str, timeout: float = 10, *args, prefix=()) -> tuple[dict, str, dict]:
    """Grade ``source`` for ``slug``; return {file:test: (verdict, message)}, the learner's output and the whole
    JSON report.  Asserts the judge cleaned up.  The answers here are about bubble-ratio's ``bubble_ratio``; its
    other function gets a stand-in that calls it, so every test meets it."""
    source = with_spans(slug, source)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    path = tmp_path / "submission_under_test.py"
    path.write_text(source)
    since = time.time()
    proc = subprocess.run([*prefix, sys.executable, str(JUDGE), "--timeout", str(timeout), *args, "test", slug, path,
                           "--json"], capture_output=True, text=True, timeout=HANG_GUARD,
                          env={**os.environ, "TMPDIR": str(tmp), "COURSE_LANG": "zh"})
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)   # --json: stdout is one JSON document
    assert_nothing_left(tmp, since)
    return {f"{r['file']}:{r['name']}": (r["verdict"], r["message"]) for r in data["results"]}, data["output"], data


def with_spans(slug: str, source: str) -> str:
    if slug == "bubble-ratio" and "def bubble_ratio" in source and "def bubble_from_spans" not in source:
        source += "\n\ndef bubble_from_spans(spans):\n    return -bubble_ratio(4, 8)   # never a ratio\n"
    return source


def verdicts(got: dict) -> set[str]:
    return {v for v, _ in got.values()}


def reports(output: str) -> list[dict]:
    return [json.loads(line.split("REPORT", 1)[1]) for line in output.splitlines() if "REPORT" in line]


WRONG = "def bubble_ratio(p, m, v=1):\n    return 0.5\n"
RIGHT = "def bubble_ratio(p, m, v=1):\n    if any(type(x) is not int or x < 1 for x in (p, m, v)):\n" \
        "        raise ValueError('positive ints')\n    return (p - 1) / (v * m + p - 1)\n"


# ---- class: what the checks rely on cannot be reached from the learner's process -----------------------------

PATCHES = {
    "course_checks_helpers": "import course.checks as c, math\n"
                             "c._isclose = c._first_difference = lambda *a, **k: None\n"
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
    got, _, _ = judge(tmp_path, "bubble-ratio", PATCHES[name] + WRONG)
    assert "passed" not in verdicts(got), got
    assert got["hidden:test_closed_form_against_the_simulator"][0] in ("failed", "error", "crashed"), got


def test_patched_course_class_method_changes_nothing(tmp_path):
    source = ("import course.timeline, course.plan\n"
              "course.plan.Plan.validate = lambda self: self\n"
              "course.timeline.Timeline.makespan = property(lambda self: 0.0)\n"
              "class Deadlock(Exception):\n    pass\n"
              "def simulate(ranks, f, b, comm=0.0):\n    return [[(0.0, 0.0)] * len(r) for r in ranks]\n")
    got, _, _ = judge(tmp_path, "event-simulator", source)
    assert verdicts(got) == {"failed"}, got


@pytest.mark.live   # imports torch in two processes (~10 s)
def test_patched_torch_changes_nothing(tmp_path):
    source = ("import torch\n"
              "torch.sub = lambda a, b, **k: torch.zeros_like(a)\n"
              "torch.Tensor.__sub__ = lambda a, b: torch.zeros_like(a)\n"
              "torch.allclose = lambda *a, **k: True\n"
              "def linear_input_grad(grad_output, weight):\n"
              "    return torch.zeros(grad_output.shape[:-1] + weight.shape[1:])\n"
              "def linear_weight_grad(grad_output, x):\n"
              "    return torch.zeros(grad_output.shape[-1], x.shape[-1]), torch.zeros(grad_output.shape[-1])\n")
    got, _, _ = judge(tmp_path, "linear-backward-split", source, 60)
    assert verdicts(got) == {"failed"}, got


# ---- class: signals (the learner shares no uid and no pid space with anything outside its job) -----------------

def attack_processes_of(tmp_path: Path) -> str:
    """Source that SIGSTOPs and then SIGKILLs whatever it can see of this test: the judge (its command line holds
    ``tmp_path``), its checker (it works under it) and a bystander, then reports what it saw."""
    return f"""\
import json, os, signal, psutil
def ours(p):
    try:
        return {str(tmp_path)!r} in " ".join(p.cmdline()) or p.cwd().startswith({str(tmp_path)!r})
    except psutil.Error:
        return False
me = {{os.getpid()}} | {{c.pid for c in psutil.Process().children(recursive=True)}}
seen = [p.pid for p in psutil.process_iter()]
hit = []
for sig in (signal.SIGSTOP, signal.SIGKILL):
    for p in psutil.process_iter():
        if p.pid not in me and p.pid != 1 and ours(p):
            try:
                p.send_signal(sig)
                hit.append(p.pid)
            except psutil.Error:
                pass
for pid in (BYSTANDER, os.getppid()):
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
print("REPORT" + json.dumps({{"seen": seen, "hit": hit}}), flush=True)
"""


needs_walls = pytest.mark.skipif(not CONTAINED, reason="no namespace can be made here: the judge says so instead "
                                                      "(test_the_graders_files_are_not_there)")


@needs_walls
def test_signals_reach_nothing_outside_the_job(tmp_path):
    """SIGSTOP and SIGKILL aimed at the judge, its checker, a bystander of the same user and the learner's own
    parent change nothing: the judge returns an honest verdict in time, the bystander runs on."""
    bystander = subprocess.Popen(["sleep", "600"], cwd=tmp_path)
    try:
        source = attack_processes_of(tmp_path).replace("BYSTANDER", str(bystander.pid)) + WRONG
        start = time.monotonic()
        got, output, report = judge(tmp_path, "bubble-ratio", source)
        assert time.monotonic() - start < 60
        assert bystander.poll() is None and psutil.Process(bystander.pid).status() != psutil.STATUS_STOPPED
        assert report["isolation"] == CONTAINED
        assert got["public:test_closed_form_examples"][0] == "failed", got   # judged, not crashed or timed out
        seen = reports(output)
        assert seen and all(r["hit"] == [] and max(r["seen"]) < 100 for r in seen), seen   # only its own namespace
    finally:
        bystander.kill()
        bystander.wait()


def test_init_and_the_judge_are_out_of_reach(tmp_path):
    """Inside its namespace the learner sees its init (pid 1) and its own processes: it can neither read init's
    memory, environment or file descriptors, nor ptrace it."""
    source = """import ctypes, json, os
report = {}
for what in ("maps", "mem", "environ"):
    try:
        open(f"/proc/1/{what}", "rb").read(1)
        report[what] = "open"
    except OSError:
        pass
try:
    for fd in os.listdir("/proc/1/fd"):
        os.close(os.open(f"/proc/1/fd/{fd}", os.O_WRONLY))
        report[f"fd/{fd}"] = "open"
except OSError:
    pass
if ctypes.CDLL(None).ptrace(16, 1, 0, 0) == 0:
    report["ptrace"] = "attached"
print("REPORT" + json.dumps(report), flush=True)
""" + WRONG
    got, output, report = judge(tmp_path, "bubble-ratio", source)
    if not CONTAINED:
        assert report["isolation"] == "none"
        return
    assert reports(output) and all(r == {} for r in reports(output)), reports(output)
    assert got["public:test_closed_form_examples"][0] == "failed"


# ---- class: the grader's files are not there -------------------------------------------------------------------

def test_the_graders_files_are_not_there(tmp_path):
    """The reference solution, the hidden tests, instructor/ and the checker's copy of the tests are not in the
    learner's view; an answer that loads the solution at grading time gets nothing from it."""
    solution = REPO / "solutions" / "bubble-ratio.py"
    source = f"""\
import json, os
paths = [{str(solution)!r}, {str(REPO / 'practice' / 'problems' / 'bubble-ratio' / 'test_hidden.py')!r},
         {str(REPO / 'instructor')!r}, os.path.join(os.path.dirname(os.getcwd()), "checker"), {str(JUDGE)!r}]
print("REPORT" + json.dumps({{"there": [p for p in paths if os.path.exists(p)]}}), flush=True)
try:
    exec(open({str(solution)!r}).read())   # the reference answer, if it can be read
except OSError:
""" + "\n".join("    " + line for line in WRONG.splitlines()) + "\n"
    got, output, report = judge(tmp_path, "bubble-ratio", source)
    if not CONTAINED:
        assert report["isolation"] == "none" and verdicts(got) == {"passed"}   # it read them: said, not hidden
        return
    assert reports(output) == [{"there": []}] * len(reports(output)) and reports(output)
    assert "passed" not in {v for k, (v, _) in got.items() if "closed_form" in k}, got


def test_files_outside_its_scratch_are_read_only(tmp_path):
    """The on-disk route (rewrite the judge, the library, the submission or torch for a later run) is closed:
    everything but its private /tmp and /dev/shm is read-only or absent."""
    targets = [REPO / "practice" / "checker.py", REPO / "course" / "sim.py", tmp_path / "outside"]
    before = {t: t.read_bytes() for t in targets if t.exists()}
    source = (f"import errno, os\nrefused = []\n"
              f"for path in {[str(t) for t in targets]!r} + ['submission.py']:\n"
              f"    try:\n"
              f"        open(path, 'ab').close()\n"
              f"    except OSError as e:\n"
              f"        refused.append(e.errno in (errno.EROFS, errno.ENOENT, errno.EACCES))\n"
              f"open('/tmp/scratch', 'w').close()\n"
              f"def bubble_ratio(p, m, v=1):\n"
              f"    if refused != [True] * 4:\n"
              f"        raise RuntimeError(refused)\n"
              f"    return (p - 1) / (v * m + p - 1)\n")
    got, _, report = judge(tmp_path, "bubble-ratio", source)
    assert {t: t.read_bytes() for t in targets if t.exists()} == before and not (tmp_path / "outside").exists()
    if CONTAINED:
        assert got["public:test_closed_form_examples"][0] == "passed", got


# ---- class: resources nobody counted -----------------------------------------------------------------------------

def grade_with_caps(tmp_path: Path, source: str, caps: dict, timeout: float, pool: bool = True) -> tuple[list, float]:
    """Grade ``source`` for bubble-ratio with other caps, through ``sandbox.grade`` as a library (as the regrade
    calls it), in a child process (grading makes its process a subreaper for good: not the test runner's).
    Returns [(verdict, message)] and seconds; asserts that grade() itself left nothing behind."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    path = tmp_path / "hog.py"
    path.write_text(with_spans("bubble-ratio", source))
    call = ("with ThreadPoolExecutor(2) as pool:\n    g = sandbox.grade(problem, path, pool=pool)\n" if pool else
            "g = sandbox.grade(problem, path)\n")
    script = (f"import json, sys, time\nfrom concurrent.futures import ThreadPoolExecutor\n"
              f"sys.path.insert(0, {str(REPO)!r})\nfrom practice import exercises, sandbox\n"
              f"for k, v in {caps!r}.items():\n    setattr(sandbox, k, v)\n"
              f"problem = exercises.find(exercises.load_problems(), 'bubble-ratio')\nproblem.timeout = {timeout}\n"
              f"path = {str(path)!r}\nstart = time.monotonic()\n{call}"
              f"print(json.dumps([time.monotonic() - start, [[r.verdict, r.message] for r in g.results]]))\n")
    since = time.time()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD,
                          env={**os.environ, "TMPDIR": str(tmp), "COURSE_LANG": "zh"})   # the messages read here
    assert proc.returncode == 0, proc.stderr
    seconds, results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert_nothing_left(tmp, since)
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
    assert seconds < 15
    assert results[0][0] == "crashed" and "out of memory" in results[0][1], results


def test_memory_of_test_files_running_at_once_is_bounded(tmp_path):
    source = ("import time\nblock = bytearray(200 << 20)\n"
              "for i in range(0, len(block), 4096):\n    block[i] = 1\ntime.sleep(60)\n")
    # each file stays under its own cap, not both together; the file that is not killed sleeps until its timeout
    results, seconds = grade_with_caps(tmp_path, source, {"ALL_RESIDENT": 250 << 20}, 6)
    assert seconds < 6 + 3 + 5 and "passed" not in {v for v, _ in results}
    assert any("同时运行" in m for _, m in results), results


TMPFS_HOG = f"""\
import os, time
written = 0
for where in ("/dev/shm", "/tmp"):
    for k in range(64):
        try:
            with open(os.path.join(where, f"{TAG}-{{k}}"), "wb") as f:
                for _ in range(24):
                    f.write(b"x" * (1 << 20))
                    written += 1 << 20
        except OSError:
            break
time.sleep(30)
""" + WRONG


@needs_walls
def test_tmpfs_memory_is_private_bounded_counted_and_gone(tmp_path):
    """Files in /dev/shm and /tmp are memory no process's resident size shows: private to the learner, bounded,
    counted in its memory cap (here 200 MiB: the writes alone go past it), and gone after the run."""
    results, seconds = grade_with_caps(tmp_path, TMPFS_HOG, {"MAX_RESIDENT": 200 << 20}, 20)
    assert seconds < 20 and results[0][0] == "crashed" and "out of memory" in results[0][1], results


def test_a_reply_that_would_expand_is_refused(tmp_path):
    """A reply of millions of tiny values (megabytes on the wire, gigabytes once decoded) is refused before it is
    parsed: by the learner process's own bound, and by the checker's when the learner writes the frame itself."""
    expand = "def bubble_ratio(p, m, v=1):\n    return [[] for _ in range(600_000)]\n"   # 1.2 million values
    got, _, _ = judge(tmp_path, "bubble-ratio", expand, 30)
    message = got["public:test_closed_form_examples"]
    assert message[0] == "error" and "too large" in message[1], message
    raw = """\
import fcntl, os
def bubble_ratio(p, m, v=1):
    body = b"[" + b"[]," * 2_000_000 + b"[]]"
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            if fd >= 256 and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                os.write(fd, len(body).to_bytes(8, "big"))
                view = memoryview(body)
                while view:
                    view = view[os.write(fd, view):]
        except OSError:
            pass
    import time
    time.sleep(30)
"""
    got, _, _ = judge(tmp_path, "bubble-ratio", raw, 30)
    first = got["public:test_closed_form_examples"]
    assert first[0] == "crashed" and "malformed reply" in first[1] and "values" in first[1], first


def test_the_checker_is_watched(tmp_path):
    """The checker decodes what the learner sends: beyond its own memory bound (here 1 MiB: at once) it is killed
    and every test says why, as crashed."""
    results, _ = grade_with_caps(tmp_path, RIGHT, {"CHECKER_RESIDENT": 1 << 20}, 10)
    assert {v for v, _ in results} == {"crashed"} and all("checker" in m for _, m in results), results


# ---- class: survivors --------------------------------------------------------------------------------------------

ESCAPER = """\
import os, sys, time
def escape():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.environ.clear()
            for fd in range(3, 1024):
                try:
                    os.close(fd)
                except OSError:
                    pass
            time.sleep(600)
        os._exit(0)
escape()
"""


def test_detached_processes_do_not_outlive_grade_as_a_library(tmp_path):
    """Double-forked, in a session of its own, environment wiped, file descriptors closed: gone once
    ``sandbox.grade()`` returns, called as the regrade calls it (no pool, no sweep of its own)."""
    results, _ = grade_with_caps(tmp_path, ESCAPER + WRONG, {}, 10, pool=False)
    assert "passed" not in {v for v, _ in results}


def test_detached_processes_do_not_outlive_the_judge(tmp_path):
    got, _, _ = judge(tmp_path, "bubble-ratio", ESCAPER + WRONG)
    assert got["public:test_closed_form_examples"][0] == "failed"


def test_a_child_writing_forever_cannot_hold_the_judge(tmp_path):
    source = ("import os, sys\n"
              "if os.fork() == 0:\n"
              "    while True:\n"
              "        for fd in range(1, 1024):\n"
              "            try:\n"
              "                os.write(fd, b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x10{\"ok\": 1.0}' * 100)\n"
              "            except OSError:\n"
              "                pass\n" + WRONG)
    start = time.monotonic()
    got, output, _ = judge(tmp_path, "bubble-ratio", source, 8)
    assert "passed" not in verdicts(got), got
    assert time.monotonic() - start < 2 * (8 + 5) + 10 and len(output) < 20000


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
    got, _, _ = judge(tmp_path, "bubble-ratio", source)
    assert verdicts(got) == {"crashed"}, got
    assert "too many processes" in got["public:test_closed_form_examples"][1]


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
        since = time.time()
        proc = subprocess.Popen([sys.executable, str(JUDGE), "test", "bubble-ratio", path], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)})
        deadline = time.monotonic() + 30
        while len(leftovers(tmp, since)) < 4 and time.monotonic() < deadline:   # 2 learners, each with a sleeper
            time.sleep(0.1)
        assert len(leftovers(tmp, since)) >= 4
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 130 and "interrupted" in err
        assert_nothing_left(tmp, since)


# ---- class: checks that ran in the learner's process -------------------------------------------------------------

RUNTIME_ROUTES = {
    "importlib": "import importlib\n"
                 "def one_f_one_b_orders(p, m, f, b, comm=0.0):\n"
                 "    lib = importlib.import_module('cou' + 'rse.sched' + 'ules')\n"
                 "    return [lib.build('1f1b', p, m).rank_tokens(s) for s in range(p)]\n",
    "kept_in_a_container": "import importlib\n"
                           "TOOLS = {'build': getattr(importlib.import_module('course.sched' + 'ules'),"
                           " 'bu' + 'ild')}\n"
                           "def one_f_one_b_orders(p, m, f, b, comm=0.0):\n"
                           "    return [TOOLS['build']('1f1b', p, m).rank_tokens(s) for s in range(p)]\n",
}


@pytest.mark.parametrize("name", sorted(RUNTIME_ROUTES))
def test_library_calls_are_refused_at_run_time(name, tmp_path):
    got, _, _ = judge(tmp_path, "one-f-one-b-order", RUNTIME_ROUTES[name])
    assert "passed" not in verdicts(got), got
    # every test that calls the answer is refused by the guard (the bad-argument test fails first: no checks)
    assert all("must not use" in m for test, (v, m) in got.items() if "bad_arguments" not in test), got


FORGED_RECORD = """\
import course.live_checks as lc


def one_f_one_b(p, r, m):   # the order the hooks look for, written out (the library's is refused at run time)
    w = min(p - r - 1, m)
    order = [["F", i] for i in range(w)]
    for i in range(m - w):
        order += [["F", w + i], ["B", i]]
    return order + [["B", i] for i in range(m - w, m)]


def forged(train_step, world_size, m, seed, timeout, relay):   # every rank's record, and no process ever started
    return [{"events": one_f_one_b(world_size, r, m), "forwards": [], "backwards": [], "refused": [], "loss": 0.0,
             "grads": []} for r in range(world_size)]


lc.record_pipeline_step = forged


def train_step(stage, rank, world_size, num_microbatches, shape, inputs, targets, loss_fn):
    return None
"""


@pytest.mark.live   # the live exercise's checker imports torch
def test_a_forged_live_record_scores_nothing(tmp_path):
    """The pipelining record is the relay's, in the checker: a record made up in the learner's process, with no
    traffic through the process group, is judged as what it is."""
    got, _, report = judge(tmp_path, "live-1f1b", FORGED_RECORD, 120)
    assert report["score"] == 0 and verdicts(got) == {"failed"}, got
    assert all("joined the process group" in m for _, m in got.values()), got


@pytest.mark.live   # torch in two processes, twice (~30 s)
def test_autograd_kept_in_a_dict_is_refused_but_importing_torch_is_fine(tmp_path):
    cheat = ("import importlib\nimport torch\n"
             "TOOLS = {'g': getattr(importlib.import_module('torch.' + 'auto' + 'grad'), 'gr' + 'ad')}\n"
             "def linear_input_grad(grad_output, weight):\n"
             "    x = torch.zeros(grad_output.shape[:-1] + (weight.shape[1],), dtype=weight.dtype,"
             " requires_grad=True)\n"
             "    with torch.enable_grad():\n"
             "        return TOOLS['g'](x @ weight.T, x, grad_output)[0]\n"
             "def linear_weight_grad(grad_output, x):\n"
             "    return grad_output.flatten(0, -2).T @ x.flatten(0, -2), grad_output.flatten(0, -2).sum(0)\n")
    got, _, _ = judge(tmp_path, "linear-backward-split", cheat, 60)
    assert verdicts(got) == {"failed"} and all("torch.autograd.grad" in m for _, m in got.values()), got
    honest = ("import torch\nimport torch.nn.functional as F\n"
              + (REPO / "solutions/linear-backward-split.py").read_text())
    got, _, _ = judge(tmp_path, "linear-backward-split", honest, 60)
    assert verdicts(got) == {"passed"}, got


# ---- the path without root: an unprivileged user namespace ------------------------------------------------------

NON_ROOT = ["unshare", "--user", "--map-user=65534", "--map-group=65534"]   # no capability, same files as root


def test_without_root_the_walls_are_a_user_namespace(tmp_path):
    """The judge as an unprivileged user (as root: in a user namespace of its own, with no capability left): its
    learner gets an unprivileged user namespace, so a bystander of the same user is out of its sight, the files are
    read-only and the solutions absent; where this kernel refuses such namespaces, the verdict says so."""
    if os.geteuid() == 0:
        if shutil.which("unshare") is None or subprocess.run([*NON_ROOT, "true"]).returncode != 0:
            pytest.skip("this machine lets root make no user namespace: no unprivileged judge to run")
        prefix = NON_ROOT
    else:
        prefix = []
    bystander = subprocess.Popen(["sleep", "600"], cwd=tmp_path)
    try:
        source = attack_processes_of(tmp_path).replace("BYSTANDER", str(bystander.pid)) + f"""
THERE = os.path.exists({str(REPO / 'solutions')!r})
try:
    open({str(REPO / 'course' / 'sim.py')!r}, "ab").close()
    WROTE = True
except OSError:
    WROTE = False
""" + RIGHT.replace("    return", "    assert not THERE and not WROTE\n    return")
        got, output, report = judge(tmp_path, "bubble-ratio", source, prefix=prefix)
        assert bystander.poll() is None and psutil.Process(bystander.pid).status() != psutil.STATUS_STOPPED
        if report["isolation"] == "none":   # the kernel refuses unprivileged namespaces: said in every verdict
            return
        assert report["isolation"] == "user", report["isolation"]
        assert got["public:test_closed_form_examples"][0] == "passed", got
        assert reports(output) and all(r["hit"] == [] for r in reports(output)), reports(output)
    finally:
        bystander.kill()
        bystander.wait()


def test_start_never_writes_through_a_symlink(tmp_path):
    workspace, outside = tmp_path / "workspace", tmp_path / "elsewhere" / "planted.py"
    workspace.mkdir()
    (workspace / "bubble-ratio.py").symlink_to(outside)   # dangling: exists() is False
    proc = subprocess.run([sys.executable, str(JUDGE), "--workspace", workspace, "start", "bubble-ratio"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "symlink" in proc.stderr
    assert not outside.exists()
