"""The local judge (practice/judge.py, exercises.py, sandbox.py): commands, exercise sources, honest verdicts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
JUDGE = REPO / "practice" / "judge.py"
REQUIRED = {"bubble-ratio": 1, "one-f-one-b-order": 2, "event-simulator": 2, "peak-activations": 2, "live-1f1b": 3,
            "interleaved-order": 4, "linear-backward-split": 5, "zb-h1-order": 5, "v-placement": 6,
            "optimal-partition": 7, "micro-batch-order": 7, "torch-actions": 8}
HANG_GUARD = 240   # a judge run that takes longer than this has hung (not a speed target)


sys.path.insert(0, str(REPO))   # `practice` is the repository's, not an installed package
from practice import exercises  # noqa: E402

# Most judge tests grade answers to bubble-ratio; its size is read from the catalogue, not repeated here.
BUBBLE = exercises.find(exercises.load_problems(), "bubble-ratio")
N_BUBBLE = sum(len(f.test_names) for f in BUBBLE.tests.values())
SPANS = "\ndef bubble_from_spans(spans):\n    return 0.123\n"   # the exercise's other function, wrong


def run(*args, cwd=REPO, lang="zh") -> subprocess.CompletedProcess:
    """The judge in ``lang`` (the messages some tests read are its Chinese ones; tests/test_i18n_judge.py: English)."""
    return subprocess.run([sys.executable, str(JUDGE), "--lang", lang, *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=HANG_GUARD)


def last_line(proc) -> str:
    """The run's summary line: the last of stdout, or of stderr under --json (stdout is then one JSON document)."""
    json_run = "--json" in proc.args
    return (proc.stderr if json_run else proc.stdout).strip().splitlines()[-1]


def counts(proc) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+) passed, (\d+) failed", last_line(proc))
    assert m, f"last line is not 'N passed, N failed': {last_line(proc)!r}"
    return int(m.group(1)), int(m.group(2))


def verdicts(proc) -> dict[str, str]:
    data = json.loads(proc.stdout)   # --json: stdout is one JSON document
    return {f"{r['file']}:{r['name']}": r["verdict"] for r in data["results"]}


# ---- the exercises ------------------------------------------------------------------------------------------------

def test_catalogue_covers_every_chapter():
    problems = exercises.load_problems(REPO / "practice" / "problems", REPO / "solutions")
    by_slug = {p.slug: p for p in problems}
    assert len(problems) >= 12
    assert {p.chapter for p in problems} == set(range(1, 9))
    for slug, chapter in REQUIRED.items():
        assert by_slug[slug].chapter == chapter, slug
    for p in problems:
        assert p.points > 0 and p.titles["en"] and re.search(r"[\u4e00-\u9fff]", p.statements.bodies["zh"]), p.slug
        assert (p.dir / "test_public.py").is_file() and (p.dir / "test_hidden.py").is_file(), p.slug
        assert "### BEGIN SOLUTION" in p.solution.read_text(), p.slug


def test_starters_and_checksums_are_derived_from_the_sources():
    problems = exercises.load_problems(REPO / "practice" / "problems", REPO / "solutions")
    assert exercises.stale_sources(problems, REPO / "practice" / "problems") == [], "run: python practice/judge.py sync"


def test_make_starter_replaces_each_solution_block():
    source = "def f(x):\n    '''doc'''\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert exercises.make_starter(source) == ("def f(x):\n    '''doc'''\n"
                                              "    raise NotImplementedError  # TODO: your code here\n")
    with pytest.raises(ValueError, match="never closed"):
        exercises.make_starter("### BEGIN SOLUTION\nx = 1\n")
    with pytest.raises(ValueError, match="without"):
        exercises.make_starter("### END SOLUTION\n")


def test_front_matter_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="front matter"):
        exercises.parse_front_matter("no front matter", "x/problem.md")
    meta, body = exercises.parse_front_matter("---\ntitle: T\nchapter: 3\nrequires: [torch, numpy]\n---\nbody", "x")
    assert meta == {"title": "T", "chapter": 3, "requires": ["torch", "numpy"]} and body == "body\n"


def test_sync_and_check_catch_broken_sources(tmp_path):
    problems, solutions = tmp_path / "problems", tmp_path / "solutions"
    shutil.copytree(REPO / "practice/problems", problems)
    shutil.copytree(REPO / "solutions", solutions)
    where = ("--problems", problems, "--solutions", solutions)
    # a wrong reference solution, and a test that even the starter passes (it checks nothing useful)
    sol = solutions / "bubble-ratio.py"
    sol.write_text(sol.read_text().replace("return (p - 1) / (v * m + p - 1)", "return (p - 1) / (m + p - 1)"))
    with open(problems / "bubble-ratio/test_public.py", "a") as f:
        f.write("\n\ndef test_vacuous():\n    pass\n")
    stale = run(*where, "check", "bubble-ratio")
    assert stale.returncode == 1 and "SHA256SUMS does not match" in stale.stdout
    assert run(*where, "sync").returncode == 0
    proc = run(*where, "check", "bubble-ratio")
    assert proc.returncode == 1 and "FAIL bubble-ratio" in proc.stdout
    assert "solution [hidden] test_closed_form_against_the_simulator: failed" in proc.stdout
    assert "starter [public] test_vacuous: passed" in proc.stdout
    assert last_line(proc) == "0 passed, 1 failed"


# ---- commands ------------------------------------------------------------------------------------------------------

def test_list_json():
    proc = run("list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {p["slug"]: p for p in json.loads(proc.stdout)}
    assert set(REQUIRED) <= set(listed)
    assert listed["live-1f1b"]["requires"] == ["torch"]


def test_start_copies_the_starter_and_never_overwrites(tmp_path):
    proc = run("--workspace", tmp_path, "start", "bubble-ratio")
    assert proc.returncode == 0 and "bubble_ratio" in proc.stdout
    target = tmp_path / "bubble-ratio.py"
    assert target.read_text() == (REPO / "practice/problems/bubble-ratio/starter.py").read_text()
    target.write_text("# my work\n")
    proc = run("--workspace", tmp_path, "start", "bubble-ratio")
    assert proc.returncode == 0 and "not overwritten" in proc.stdout
    assert target.read_text() == "# my work\n"


def test_test_command_exit_codes_and_json():
    good = run("test", "bubble-ratio", REPO / "solutions/bubble-ratio.py", "--json")
    assert good.returncode == 0 and counts(good) == (N_BUBBLE, 0)
    assert set(verdicts(good).values()) == {"passed"}
    bad = run("test", "bubble-ratio", REPO / "practice/problems/bubble-ratio/starter.py")
    assert bad.returncode == 1 and counts(bad) == (0, N_BUBBLE)
    assert "NotImplementedError" in bad.stdout


def test_scoreboard_grades_the_workspace(tmp_path):
    shutil.copy(REPO / "solutions/bubble-ratio.py", tmp_path / "bubble-ratio.py")
    shutil.copy(REPO / "practice/problems/v-placement/starter.py", tmp_path / "v-placement.py")
    proc = run("--workspace", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"bubble-ratio\s+1\s+{N_BUBBLE}/{N_BUBBLE}\s+{BUBBLE.points}/{BUBBLE.points}", proc.stdout), \
        proc.stdout
    assert re.search(r"v-placement\s+6\s+0/5\s+0/10", proc.stdout), proc.stdout
    assert "not started" in proc.stdout
    assert counts(proc) == (N_BUBBLE, 5)


def test_unknown_exercise_is_one_clear_line():
    proc = run("test", "no-such-exercise")
    assert proc.returncode == 2
    assert "(unknown exercise) 'no-such-exercise'" in proc.stderr and "bubble-ratio" in proc.stderr
    assert last_line(proc) == "0 passed, 1 failed"


@pytest.mark.slow        # the doctor imports torch in a fresh interpreter
def test_doctor_reports_torch_gloo_and_cores():
    proc = run("doctor")
    assert proc.returncode == 0, proc.stdout
    n = len(exercises.load_problems())
    for word in ("torch", "gloo", "cores", f"{n}/{n} exercises can run here"):
        assert word in proc.stdout


def test_hidden_tests_show_name_and_message_not_source(tmp_path):
    wrong = tmp_path / "wrong.py"
    solution = (REPO / "solutions/bubble-ratio.py").read_text()
    wrong.write_text(solution.replace("return (p - 1) / (v * m + p - 1)", "return (p - 1) / (m + p - 1)"))  # ignores v
    proc = run("test", "bubble-ratio", wrong)
    assert counts(proc) == (N_BUBBLE - 2, 2)     # the public v=2 example and the hidden closed form
    assert "[hidden] test_closed_form_against_the_simulator" in proc.stdout and "bubble_ratio(" in proc.stdout
    hidden = (REPO / "practice/problems/bubble-ratio/test_hidden.py").read_text()
    for line in hidden.splitlines():
        if len(line.strip()) > 25:
            assert line.strip() not in proc.stdout, f"hidden test source leaked: {line!r}"
    assert re.search(r"seed=\d+", proc.stdout), "randomised failures print their seed"


def test_library_shortcuts_are_rejected(tmp_path):
    cheat = tmp_path / "cheat.py"
    cheat.write_text("from course.schedules import build\n\ndef one_f_one_b_orders(p, m, f, b, comm=0.0):\n"
                     "    return [build('1f1b', p, m).rank_tokens(s) for s in range(p)]\n")
    proc = run("test", "one-f-one-b-order", cheat)
    assert proc.returncode == 1 and "must not use" in proc.stdout


def test_long_output_is_truncated(tmp_path):
    noisy = tmp_path / "noisy.py"
    noisy.write_text("print('x' * 200000)\ndef bubble_ratio(p, m, v=1):\n    return 0.5\n")
    proc = run("test", "bubble-ratio", noisy)
    assert "truncated" in proc.stdout and len(proc.stdout) < 20000


# ---- hostile submissions: honest verdicts within the time limit ------------------------------------------------

HOSTILE = {
    "infinite_loop_at_import": ("while True:\n    pass\n", "timeout"),
    "infinite_loop_in_call": ("def bubble_ratio(p, m, v=1):\n    while True:\n        pass\n", "timeout"),
    "sys_exit_at_import": ("import sys\nprint('6 passed, 0 failed')\nsys.exit(0)\n", "crashed"),
    "os_exit_in_call": ("import os\ndef bubble_ratio(p, m, v=1):\n    os._exit(0)\n", "crashed"),
    "kill_itself": ("import os, signal\ndef bubble_ratio(p, m, v=1):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
                    "crashed"),
    "fake_verdicts": (
        "import json, os\n"
        "for fd in range(3, 64):\n"
        "    for i in range(8):\n"
        "        body = json.dumps({'event': 'result', 'test': 'test_textbook_values', 'verdict': 'passed',\n"
        "                           'message': '', 'nonce': '0', 'seq': i})\n"
        "        try:\n"
        "            os.write(fd, (json.dumps({'body': body, 'mac': '0' * 64}) + '\\n').encode())\n"
        "        except OSError:\n"
        "            pass\n"
        "print('6 passed, 0 failed')\n"
        "def bubble_ratio(p, m, v=1):\n    return 0.5\n", "failed"),
    "monkeypatched_checkers": (
        "import math, course.checks, pytest, numpy.testing\n"
        "math.isclose = lambda *a, **k: True\n"
        "course.checks.assert_close = course.checks.assert_equal = lambda *a, **k: None\n"
        "course.checks._first_difference = lambda *a, **k: None\n"
        "numpy.testing.assert_allclose = lambda *a, **k: None\n"
        "pytest.approx = lambda *a, **k: type('Any', (), {'__eq__': lambda s, o: True})()\n"
        "def bubble_ratio(p, m, v=1):\n    return 0.123\n", "failed"),   # patched in its own process: no effect
    "patched_test_module": (
        "import sys\n"
        "for name in ('test_public', 'test_hidden'):\n"
        "    if name in sys.modules:\n"
        "        sys.modules[name].assert_close = sys.modules[name].assert_raises = lambda *a, **k: None\n"
        "def bubble_ratio(p, m, v=1):\n    return 0.5\n", "failed"),   # the test module is not in its process
    "patched_harness": (
        "import __main__, json\n"
        "__main__._classify = lambda *a, **k: ('passed', '')\n"
        "__main__._changed = lambda *a, **k: []\n"
        "json.dumps = lambda *a, **k: '{\"verdict\": \"passed\"}'\n"
        "def bubble_ratio(p, m, v=1):\n    return 0.5\n", "failed"),
    "equals_everything": (
        "class Anything(float):\n"
        "    def __eq__(self, other): return True\n"
        "    __hash__ = float.__hash__\n"
        "    def __repr__(self): raise RuntimeError('do not call me')\n"
        "def bubble_ratio(p, m, v=1):\n    return Anything(0.0)\n", "failed"),
}


HOSTILE = {k: (src + SPANS if "def bubble_ratio" in src else src, verdict) for k, (src, verdict) in HOSTILE.items()}


@pytest.mark.slow        # each one a judged submission, some waiting for the time limit
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_submission_gets_an_honest_verdict(name, tmp_path):
    source, expected = HOSTILE[name]
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    start = time.monotonic()
    proc = run("--timeout", 10, "test", "bubble-ratio", path, "--json")
    elapsed = time.monotonic() - start
    print(f"{name}: {elapsed:.1f} s")
    assert proc.returncode == 1
    got = verdicts(proc)
    assert "passed" not in got.values(), got
    assert expected in got.values(), got
    passed, failed = counts(proc)
    assert (passed, failed) == (0, N_BUBBLE)


def test_background_child_cannot_keep_the_judge_waiting(tmp_path):
    path = tmp_path / "orphan.py"   # the child says it started (its pid would be its namespace's, not ours)
    path.write_text("import os, time\nif os.fork() == 0:\n    print('CHILD started', flush=True)\n"
                    "    time.sleep(3600)\ndef bubble_ratio(p, m, v=1):\n    return 0.5\n" + SPANS)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.run([sys.executable, str(JUDGE), "--timeout", "6", "test", "bubble-ratio", str(path)],
                          capture_output=True, text=True, timeout=HANG_GUARD, env={**os.environ, "TMPDIR": str(tmp)})
    assert counts(proc) == (0, N_BUBBLE)
    assert "CHILD started" in proc.stdout, proc.stdout
    time.sleep(0.5)
    assert not working_under(tmp), "the judge left a learner's background process running"


def working_under(root: Path) -> list[int]:
    """Running processes whose working directory is under ``root`` (every learner process starts in one)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
            if not zombie and os.readlink(f"/proc/{pid}/cwd").startswith(str(root)):
                found.append(int(pid))
        except OSError:
            pass
    return found


def test_rewritten_test_files_change_nothing(tmp_path):
    problems = tmp_path / "problems"
    shutil.copytree(REPO / "practice/problems", problems)
    target = problems / "bubble-ratio"
    path = tmp_path / "rewrite.py"
    path.write_text("import pathlib\n"
                    f"for f in (list(pathlib.Path({str(target)!r}).glob('test_*.py'))\n"
                    "          + list(pathlib.Path('.').glob('test_*.py'))):\n"
                    "    f.write_text('def test_everything():\\n    pass\\n')\n"
                    "def bubble_ratio(p, m, v=1):\n    return 0.5\n" + SPANS)
    first = run("--problems", problems, "test", "bubble-ratio", path)
    assert counts(first) == (0, N_BUBBLE), first.stdout
    if os.geteuid() == 0:   # as root the learner sees its files read-only: the rewrite itself was refused ...
        assert "def test_everything" not in (target / "test_hidden.py").read_text()
        (target / "test_hidden.py").write_text("def test_everything():\n    pass\n")   # ... so rewrite them here
    else:
        assert "def test_everything" in (target / "test_hidden.py").read_text()   # it did rewrite them ...
    second = run("--problems", problems, "test", "bubble-ratio", path)   # ... and the judge notices
    assert second.returncode == 2 and "test file modified" in second.stderr
    assert last_line(second) == "0 passed, 1 failed"


def test_patched_reference_implementation_is_caught(tmp_path):
    path = tmp_path / "patch_reference.py"
    path.write_text("import course.sim\n"
                    "class Deadlock(Exception):\n    pass\n"
                    "def simulate(ranks, f, b, comm=0.0):\n    return [[(0.0, 1.0)] * len(r) for r in ranks]\n"
                    "course.sim.simulate = lambda plan, costs=None, **k: None   # the tests' reference\n")
    proc = run("test", "event-simulator", path, "--json")
    got = verdicts(proc)
    assert "passed" not in got.values(), got
    # the reference runs in the checker, which never imported the learner's patch: the wrong spans fail
    assert got["hidden:test_uneven_one_f_one_b"] == "failed"
    assert "期望 (expected)" in proc.stdout


@pytest.mark.live
def test_deadlocked_live_answer_is_reported_as_deadlock(tmp_path):
    path = tmp_path / "deadlock.py"
    path.write_text("import torch\nimport torch.distributed as dist\n\n"
                    "def train_step(stage, rank, world_size, num_microbatches, shape, inputs, targets, loss_fn):\n"
                    "    grad = torch.empty(shape, dtype=torch.float64)\n"
                    "    dist.recv(grad, src=(rank + 1) % world_size)   # everyone waits, nobody sends\n")
    proc = run("test", "live-1f1b", path, "--json")
    data = json.loads(proc.stdout)   # --json: stdout is one JSON document
    assert proc.returncode == 1
    assert [r["verdict"] for r in data["results"]] == ["failed"] * 3, [r["message"][:300] for r in data["results"]]
    assert all("死锁 (deadlock)" in r["message"] for r in data["results"]), data["results"][0]["message"]


@pytest.mark.live
def test_the_live_starter_says_not_implemented_without_a_traceback():
    proc = run("test", "live-1f1b", REPO / "practice/problems/live-1f1b/starter.py", "--json")
    results = json.loads(proc.stdout)["results"]
    assert proc.returncode == 1 and [r["verdict"] for r in results] == ["error"] * 3
    for r in results:
        assert r["message"].startswith("还没有实现 (NotImplementedError)") and "Traceback" not in r["message"], r


@pytest.mark.live
def test_check_passes_and_reports_its_time():
    proc = run("check")
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout
    assert re.search(r"check: \d+ exercises in [\d.]+ s wall", proc.stdout)
    passed, failed = counts(proc)
    assert failed == 0 and passed >= 12


TAMPERED = '''import course.checks as _c
for _name in [n for n in dir(_c) if n.startswith("assert_")]:
    setattr(_c, _name, lambda *a, **k: None)        # checks disarmed in the learner process: reaches nothing
{defs}
'''


@pytest.mark.slow        # one judged submission per exercise
@pytest.mark.parametrize("slug", sorted(p.slug for p in exercises.load_problems()
                                        if "torch" not in p.requires))
def test_a_tampered_answer_scores_zero_on_every_exercise(slug, tmp_path):
    """Every exercise: functions that return nothing, with the checks patched to no-ops, pass no test."""
    problem = exercises.find(exercises.load_problems(), slug)
    names = sorted({n for f in problem.tests.values() for n in f.submission_names})
    defs = "\n".join(f"class {n}(Exception):\n    pass" if n[0].isupper()
                     else f"def {n}(*args, **kwargs):\n    return None" for n in names)
    answer = tmp_path / f"{slug}.py"
    answer.write_text(TAMPERED.format(defs=defs))
    passed, failed = counts(run("test", slug, answer))
    assert passed == 0 and failed > 0


def test_json_output_is_one_document_and_the_summary_goes_to_stderr(tmp_path):
    shutil.copy(REPO / "solutions/bubble-ratio.py", tmp_path / "bubble-ratio.py")
    for args in (["list", "--json"], ["--json", "--workspace", tmp_path],
                 ["test", "bubble-ratio", tmp_path / "bubble-ratio.py", "--json"],
                 ["test", "no-such-exercise", "--json"]):
        proc = run(*args)
        if proc.returncode != 2:
            json.loads(proc.stdout)       # the whole of stdout, nothing after it
        else:
            assert proc.stdout == ""
        assert "passed, " not in proc.stdout
        if args[0] != "list":
            assert re.fullmatch(r"\d+ passed, \d+ failed", last_line(proc)), proc.stderr


def test_files_left_in_the_old_workspace_move_to_the_learner_folder(tmp_path, capsys):
    from practice import judge

    old, new = tmp_path / "practice" / "workspace", tmp_path / "workspace"
    old.mkdir(parents=True)
    (old / "bubble-ratio.py").write_text("# mine\n")
    (old / "choose-m.py").write_text("# old copy\n")
    new.mkdir()
    (new / "choose-m.py").write_text("# newer copy\n")
    judge.move_old_workspace(old, new)
    err = capsys.readouterr().err
    assert (new / "bubble-ratio.py").read_text() == "# mine\n" and not (old / "bubble-ratio.py").exists()
    assert "(moved)" in err and "bubble-ratio.py" in err
    # a name taken in the learner folder: both files stay, and the one graded is named
    assert (old / "choose-m.py").read_text() == "# old copy\n" and (new / "choose-m.py").read_text() == "# newer copy\n"
    assert "(left where it is)" in err
    judge.move_old_workspace(old, new)          # once moved, nothing more to say about it
    assert "bubble-ratio" not in capsys.readouterr().err


SWEEP_RACE = '''
import os, subprocess, sys, threading
from practice import exercises, sandbox

problem = exercises.load_problems()[0]
real_orphans, started, other = sandbox._orphans, threading.Event(), {}


def another_grade():   # another thread's grade() starts a test file: a marked process, not yet its Popen's
    other["run"] = sandbox._Run(problem)
    other["proc"] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                     env={**os.environ, "PRACTICE_RUN": other["run"].marker})
    started.set()


def orphans_while_another_starts():
    sandbox._orphans = real_orphans
    threading.Thread(target=another_grade).start()
    started.wait(2.0)   # a sweep that let go of the lock lets it start here
    return real_orphans()


sandbox._orphans = orphans_while_another_starts
sandbox.sweep()
try:
    assert started.wait(30), "the other test file never started"
    print("alive" if other["proc"].poll() is None else "killed by the sweep")
finally:   # the sleeper never outlives this script
    if "proc" in other:
        other["proc"].kill()
    if "run" in other:
        other["run"].close()
'''


def test_a_sweep_never_kills_a_test_file_that_another_thread_starts_meanwhile():
    """The regrade grades two students at once; one student's end-of-grade sweep once killed the other's freshly
    started learner (a marked process its Popen did not own yet): an honest answer then lost a file's points as
    'crashed'."""
    proc = subprocess.run([sys.executable, "-c", SWEEP_RACE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "alive", proc.stdout + proc.stderr
