"""instructor/grade.py: a class of chapter 1 autograded and regraded in parallel, with real nbgrader.

One class has four broken notebooks: one that is not JSON, one that nbgrader refuses (old metadata; the regrade
grades it), one whose answer kills its kernel, one whose answer never returns and ignores the interrupt (the
reference answers elsewhere).  Another (two honest students, one
blank) is graded four ways that must agree to the byte: with ``--jobs 2``; interrupted by SIGINT after its first
student, then run again; on a Dask LocalCluster on 127.0.0.1; and the serial way, ``nbgrader autograde`` then
``instructor/regrade.py``.
"""

import csv
import importlib.util
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"
GRADE = INSTRUCTOR / "grade.py"
POINTS = 15   # each chapter 1 exercise

pytestmark = pytest.mark.timeout(600)

ANSWERS = {
    "kills-kernel": "import os\n\nos._exit(1)   # the kernel dies as the solution cell runs\n",
    "never-ends": """\
import signal


def bubble_from_spans(spans):   # never returns, and Ctrl-C (SIGINT) cannot stop it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        pass


def bubble_ratio(p, m, v=1):
    return bubble_from_spans([])
""",
}


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


grade = load("instructor_grade", GRADE)


def notebook_for(student: str, release: Path) -> str:
    """The student's ch01.ipynb: the release as fetched, with the reference answers except where they differ."""
    if student == "blank":
        return release.read_text(encoding="utf-8")
    if student == "not-json":
        return '{"cells": [ this is not JSON'
    if student == "old-metadata":   # the reference answers, in cells nbgrader refuses to read (schema version 1)
        nb = nbformat.reads(notebook_for("honest", release), as_version=4)
        for cell in nb.cells:
            cell.metadata.get("nbgrader", {})["schema_version"] = 1
        return nbformat.writes(nb)
    source = nbformat.read(INSTRUCTOR / "source" / "ch01" / "ch01.ipynb", as_version=4)
    solutions = {c.metadata.nbgrader["grade_id"]: c.source for c in source.cells if c.metadata.nbgrader["solution"]}
    nb = nbformat.read(release, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = ANSWERS[student] if grade_id == "bubble_ratio" and student in ANSWERS else solutions[grade_id]
    return nbformat.writes(nb)


def make_course(path: Path, students) -> Path:
    """An nbgrader course directory with ch01 generated and ``students`` submitted (collected)."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    path.mkdir(parents=True)
    config = (INSTRUCTOR / "nbgrader_config.py").read_text(encoding="utf-8")
    # a stuck cell waits 6 s here, not the minutes of a real limit
    (path / "nbgrader_config.py").write_text(config + "\nc.Execute.timeout_func = lambda cell: 6\n")
    shutil.copytree(INSTRUCTOR / "source" / "ch01", path / "source" / "ch01")
    loaded = PyFileConfigLoader("nbgrader_config.py", path=str(path)).load_config()
    loaded.CourseDirectory.root = str(path)
    result = NbGraderAPI(config=loaded).generate_assignment("ch01")
    assert result["success"], result.get("log")
    for i, student in enumerate(students):
        target = path / "submitted" / student / "ch01"
        target.mkdir(parents=True)
        (target / "ch01.ipynb").write_text(notebook_for(student, path / "release" / "ch01" / "ch01.ipynb"))
        (target / "timestamp.txt").write_text(f"2026-03-0{i + 1} 12:00:00.000000 UTC")
    return path


def env(tmp: Path) -> dict:
    """grade.py's environment: this interpreter's tools on PATH (alembic), temporary files in ``tmp``."""
    (tmp / "tmp").mkdir(exist_ok=True)
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "TMPDIR": str(tmp / "tmp")}


def run(course: Path, *args, tmp: Path):
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(GRADE), "ch01", "--course-dir", str(course), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=500, env=env(tmp))
    print(f"grade.py {' '.join(args)}: {time.monotonic() - start:.1f} s\n{result.stdout}{result.stderr[-3000:]}")
    return result


def table(course: Path) -> dict:
    text = (course / "regrade-ch01.csv").read_text(encoding="utf-8")
    return {(r["student"], r["exercise"]): r for r in csv.DictReader(io.StringIO(text))}


def gradebook(course: Path) -> dict:
    """student -> {test cell: auto score} for ch01."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student_id: {g.name: g.auto_score for nb in s.notebooks for g in nb.grades}
                for s in gb.assignment_submissions("ch01")}


def left_behind(tmp: Path) -> list:
    """Grading processes (and what they started) or temporary directories of grade.py still there."""
    mine = []
    for p in psutil.process_iter(["cmdline", "environ"]):
        try:
            if str(tmp / "tmp") in (p.info["environ"] or {}).get("TMPDIR", ""):
                mine.append(" ".join(p.info["cmdline"] or []))
        except psutil.Error:
            pass
    return mine + sorted(str(p) for p in (tmp / "tmp").iterdir())


@pytest.fixture(scope="module")
def broken_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broken")
    course = make_course(tmp / "course", ["not-json", "old-metadata", "kills-kernel", "never-ends"])
    return course, run(course, "--jobs", "2", tmp=tmp), tmp


def test_every_student_is_graded_and_a_broken_notebook_costs_its_own_points(broken_class):
    course, result, tmp = broken_class
    assert result.returncode == 1, result.stderr   # 1: some submissions could not be graded as usual
    rows = table(course)
    got = {key: (r["nbgrader"], r["regrade"], r["max"]) for key, r in rows.items()}
    full, zero, none = ("15", "15", "15"), ("0", "0", "15"), ("", "", "15")
    assert got == {
        ("not-json", "bubble-ratio"): none, ("not-json", "choose-m"): none,
        ("old-metadata", "bubble-ratio"): ("", "15", "15"), ("old-metadata", "choose-m"): ("", "15", "15"),
        ("kills-kernel", "bubble-ratio"): zero, ("kills-kernel", "choose-m"): full,
        ("never-ends", "bubble-ratio"): zero, ("never-ends", "choose-m"): full,
    }
    reasons = {key: r["reason"] for key, r in rows.items() if r["reason"]}
    assert set(reasons) == {("not-json", "bubble-ratio"), ("not-json", "choose-m"), ("old-metadata", "bubble-ratio"),
                            ("old-metadata", "choose-m"), ("kills-kernel", "bubble-ratio"),
                            ("never-ends", "bubble-ratio")}, reasons
    assert "JSON" in reasons["not-json", "bubble-ratio"]
    assert reasons["old-metadata", "choose-m"].startswith("nbgrader: One or more notebooks in the assignment use an "
                                                          "old version")
    assert "DeadKernelError" in reasons["kills-kernel", "bubble-ratio"]
    assert "CellTimeoutError" in reasons["never-ends", "bubble-ratio"]
    # every submission is in the gradebook, with the scores of the CSV
    book = gradebook(course)
    assert set(book) == {s for s, _ in rows}
    for (student, exercise), row in rows.items():
        score = book[student][exercise.replace("-", "_") + "_tests"]
        assert ("" if score is None else f"{score:g}") == row["nbgrader"], (student, exercise)
    assert sorted(p.name for p in (course / "autograded").iterdir()) == ["kills-kernel", "never-ends"]
    assert left_behind(tmp) == []


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """A class graded with --jobs 2: (course template, its CSV, its gradebook)."""
    tmp = tmp_path_factory.mktemp("small")
    template = make_course(tmp / "template", ["ann", "blank", "cy"])
    course = tmp / "reference"
    shutil.copytree(template, course)
    assert run(course, "--jobs", "2", tmp=tmp).returncode == 0
    return template, (course / "regrade-ch01.csv").read_text(encoding="utf-8"), gradebook(course), tmp


def test_an_interrupted_run_keeps_whole_students_and_a_rerun_ends_with_the_same_csv(small_class):
    template, reference, reference_book, tmp = small_class
    course = tmp / "interrupted"
    shutil.copytree(template, course)
    proc = subprocess.Popen([sys.executable, str(GRADE), "ch01", "--course-dir", str(course), "--jobs", "1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env(tmp))
    lines = []
    timer = threading.Timer(300, proc.kill)
    timer.start()
    for line in proc.stdout:
        lines.append(line)
        if "(1/3)" in line:       # the first student is written: interrupt in the middle of the second
            proc.send_signal(signal.SIGINT)
    timer.cancel()
    print("".join(lines))
    assert proc.wait() == 130, lines
    assert lines[-1].startswith("interrupted: 1 of 3 submissions graded and saved"), lines
    book = gradebook(course)
    assert len(book) == 1 and book == {s: reference_book[s] for s in book}   # one whole student, nothing else
    assert not (course / "regrade-ch01.csv").exists()
    assert left_behind(tmp) == []

    rerun = run(course, "--jobs", "2", tmp=tmp)
    assert rerun.returncode == 0 and "2 of 3 submissions (1 graded before)" in rerun.stdout
    assert (course / "regrade-ch01.csv").read_text(encoding="utf-8") == reference
    assert gradebook(course) == reference_book


def test_the_csv_is_the_one_of_nbgrader_autograde_then_regrade_py(small_class):
    """The serial way grade.py replaces, on a copy of the same class: the same table, to the byte."""
    template, reference, reference_book, tmp = small_class
    course = tmp / "serial"
    shutil.copytree(template, course)
    (tmp / "serial-tmp").mkdir(exist_ok=True)   # its own temporary files: nbgrader leaves its kernels' jail
    serial_env = env(tmp / "serial-tmp")        # mount point there, which is not grade.py's to remove
    autograde = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "ch01"], cwd=course,
                               capture_output=True, text=True, timeout=400, env=serial_env)
    assert autograde.returncode == 0, autograde.stderr[-3000:]
    result = subprocess.run([sys.executable, str(INSTRUCTOR / "regrade.py"), "ch01", "--course-dir", str(course)],
                            cwd=ROOT, capture_output=True, text=True, timeout=400, env=serial_env)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert (course / "regrade-ch01.csv").read_text(encoding="utf-8") == reference
    assert gradebook(course) == reference_book
    rows = table(course)
    assert {r["regrade"] for (s, _), r in rows.items() if s != "blank"} == {str(POINTS)}   # not an empty table
    assert {r["regrade"] for (s, _), r in rows.items() if s == "blank"} == {"0"}


def test_the_same_jobs_on_a_dask_local_cluster_give_the_same_csv(small_class):
    template, reference, reference_book, tmp = small_class
    course = tmp / "dask"
    shutil.copytree(template, course)
    result = run(course, "--engine", "dask", "--jobs", "2", tmp=tmp)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (course / "regrade-ch01.csv").read_text(encoding="utf-8") == reference
    assert gradebook(course) == reference_book
    assert left_behind(tmp) == []


def test_a_job_past_its_limit_is_stopped_and_accounted_for_but_not_saved(small_class):
    template, _, _, tmp = small_class
    course = tmp / "limited"
    shutil.copytree(template, course)
    result = run(course, "--jobs", "2", "--job-timeout", "0.5", tmp=tmp)
    assert result.returncode == 1
    rows = table(course)
    assert {(r["nbgrader"], r["regrade"], r["reason"]) for r in rows.values()} == {
        ("", "", "grading ran past its time limit (0.5 s)")}, rows
    assert set(gradebook(course)) == {s for s, _ in rows}          # accounted for, with no score
    assert not list((course / ".grade" / "ch01").glob("*.json"))   # so the next run grades them
    assert left_behind(tmp) == []


class FakeWorker:
    """Stands in for grading.Worker: records how many jobs run at once."""
    running = peak = 0
    lock = threading.Lock()

    def __init__(self, context, log=None):
        pass

    def grade(self, job, timeout):
        with FakeWorker.lock:
            FakeWorker.running += 1
            FakeWorker.peak = max(FakeWorker.peak, FakeWorker.running)
        time.sleep(0.05)
        with FakeWorker.lock:
            FakeWorker.running -= 1
        return {"student": job["student"]}

    def kill(self, close=False):
        pass

    close = kill


@pytest.mark.parametrize("slots, weight, peak", [(2, 1, 2), (2, 4, 1), (8, 4, 2), (3, 1, 3)])
def test_a_job_takes_as_many_slots_as_processes_it_runs(tmp_path, monkeypatch, slots, weight, peak):
    monkeypatch.setattr(grade.grading, "Worker", FakeWorker)
    FakeWorker.peak = 0
    jobs = [grade.Job(f"s{i}", {}, "") for i in range(8)]
    p = grade.Plan(tmp_path, "ch03", "", [], [j.student for j in jobs], jobs, weight, 60)
    seen = []
    grade.run_local(p, {}, slots, threading.Event(), lambda job, result: seen.append(result["student"]))
    assert sorted(seen) == sorted(j.student for j in jobs) and FakeWorker.peak == peak


def test_live_exercises_weigh_their_processes():
    from practice.exercises import load_problems

    exercises, _ = grade.regrade.exercises(INSTRUCTOR / "source" / "ch03", load_problems())
    assert max(e.problem.processes for e in exercises) == 4


@pytest.mark.parametrize("args, message", [
    (["ch01", "--jobs", "0"], "--jobs must be a positive integer"),
    (["ch99"], "no notebooks in"),
    (["ch01", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler needs --engine dask"),
    (["ch01", "--job-timeout", "-1"], "--job-timeout must be"),
    (["ch01", "--course-dir", "/nonexistent"], "no such course directory"),
])
def test_bad_usage_is_one_line_and_exit_2(small_class, capsys, args, message):
    template = small_class[0]
    if "--course-dir" not in args:
        args = [*args, "--course-dir", str(template)]
    assert grade.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("grade: ") and message in err and err.count("\n") == 1, err


def test_a_course_without_submissions_or_gradebook_is_refused(tmp_path, capsys):
    course = tmp_path / "course"
    shutil.copytree(INSTRUCTOR / "source" / "ch01", course / "source" / "ch01")
    assert grade.main(["ch01", "--course-dir", str(course)]) == 2
    assert "no gradebook" in capsys.readouterr().err


def test_nbgrader_s_reason_is_the_exception_under_its_traceback_else_its_first_error():
    log = ("[INFO] Sanitizing x.ipynb\n[ERROR] There was an error processing assignment: /c/submitted/s/ch01\n"
           "[ERROR] Traceback (most recent call last):\n  File \"base.py\", line 1, in convert\n    read(path)\n"
           "nbformat.reader.NotJSONError: Notebook does not appear to be JSON\n\n[ERROR] Please see the traceback\n")
    assert grade.grading.autograde_error(log) == "nbformat.reader.NotJSONError: Notebook does not appear to be JSON"
    assert grade.grading.autograde_error("[WARNING] w\n[ERROR] One or more notebooks use an old\n    version\n") == \
        "One or more notebooks use an old version"
