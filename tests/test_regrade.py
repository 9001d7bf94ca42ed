"""instructor/regrade.py: the out-of-kernel regrade of a class, on a small course built here (chapter 1's
bubble-ratio), with a gradebook written through nbgrader's API.  The whole class through real nbgrader
(honest, blank, tampered and in-kernel-cheating students) is in tests/test_nbgrader_workflow.py."""

import csv
import os
import importlib.util
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"
SOLUTION = (ROOT / "solutions" / "bubble-ratio.py").read_text(encoding="utf-8")
WRONG = "def bubble_ratio(p, m, v=1):\n    return 0.5\n\n\ndef bubble_from_spans(spans):\n    return 0.5\n"
POINTS = "15"   # bubble-ratio's points (practice/problems/bubble-ratio/problem.md)


def load_regrade():
    spec = importlib.util.spec_from_file_location("instructor_regrade", INSTRUCTOR / "regrade.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regrade = load_regrade()


def source_notebook():
    return nbformat.read(INSTRUCTOR / "source" / "ch01" / "ch01.ipynb", as_version=4)


def submit(course: Path, student: str, solution: str, extra: list[str] = ()):
    """A submitted ch01 notebook whose bubble-ratio solution cell holds `solution` (the other exercises keep the
    reference answers of the source notebook), with `extra` cells appended."""
    nb = source_notebook()
    for cell in nb.cells:
        if cell.metadata.nbgrader["solution"] and cell.metadata.nbgrader["grade_id"] == "bubble_ratio":
            cell.source = solution
    nb.cells += [nbformat.v4.new_code_cell(src) for src in extra]
    path = course / "submitted" / student / "ch01" / "ch01.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)


def gradebook(course: Path, scores: dict):
    """gradebook.db with ch01 and, per student, bubble_ratio_tests' auto score (None: submitted, not autograded)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment("ch01")
        gb.add_notebook("ch01", "ch01")
        gb.add_grade_cell("bubble_ratio_tests", "ch01", "ch01", max_score=int(POINTS), cell_type="code")
        for student, score in scores.items():
            gb.add_student(student)
            gb.add_submission("ch01", student)
            grade = gb.find_grade("bubble_ratio_tests", "ch01", "ch01", student)
            grade.auto_score = score
            gb.db.commit()


@pytest.fixture
def course(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])  # alembic
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    shutil.copytree(INSTRUCTOR / "source" / "ch01", course / "source" / "ch01")
    return course


def run(*args):
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(INSTRUCTOR / "regrade.py"), *map(str, args)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    return result, time.monotonic() - start


def read_csv(path: Path, exercise: str = "bubble-ratio"):
    """The rows of one exercise, by student."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == ["student", "exercise", "nbgrader", "regrade", "max", "flag", "reason"]
    return {r["student"]: r for r in rows if r["exercise"] == exercise}


def test_the_cells_the_kernel_would_load_are_regraded():
    nb = source_notebook()
    exercise = regrade.Exercise(None, "bubble_ratio", "ch01", ["bubble_from_spans", "bubble_ratio"])
    solution = next(c for c in nb.cells if c.metadata.nbgrader["solution"])
    solution.source = WRONG
    locked = {c.metadata.nbgrader["grade_id"] for c in nb.cells if c.metadata.nbgrader["locked"]}
    assert regrade.submission_source(nb, exercise, locked) == WRONG + "\n"
    nb.cells.append(nbformat.v4.new_code_cell("import math\n\ndef bubble_ratio(p, m, v=1):\n    return 1.0\n"))
    nb.cells.append(nbformat.v4.new_code_cell("def broken(:\n"))    # does not parse: defines nothing
    assert "return 1.0" in regrade.submission_source(nb, exercise, locked)   # the last definition, as in the kernel
    tests = next(c for c in nb.cells if c.metadata.nbgrader["grade_id"] == "bubble_ratio_tests")
    assert regrade.loaded_names(tests.source) == ["bubble_from_spans", "bubble_ratio"]


def test_a_class_is_regraded_and_an_in_kernel_score_above_it_is_flagged(course):
    submit(course, "honest", SOLUTION)
    submit(course, "blank", "def bubble_ratio(p, m, v=1):\n    raise NotImplementedError()\n\n\n"
                            "def bubble_from_spans(spans):\n    raise NotImplementedError()\n")
    submit(course, "late_fix", WRONG, extra=[SOLUTION])           # fixed in a cell of their own: honest
    submit(course, "cheat", WRONG)                                # nbgrader said 10: it was not
    submit(course, "pending", SOLUTION)                           # submitted, not autograded yet
    submit(course, "unknown", SOLUTION)                           # not in the gradebook at all
    full = int(POINTS)
    gradebook(course, {"honest": full, "blank": 0, "late_fix": full, "cheat": full, "pending": None})
    result, seconds = run("ch01", "--course-dir", course)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = read_csv(course / "regrade-ch01.csv")
    got = {s: (r["exercise"], r["nbgrader"], r["regrade"], r["max"], r["flag"]) for s, r in rows.items()}
    assert got == {
        "honest": ("bubble-ratio", POINTS, POINTS, POINTS, ""),
        "blank": ("bubble-ratio", "0", "0", POINTS, ""),
        "late_fix": ("bubble-ratio", POINTS, POINTS, POINTS, ""),
        "cheat": ("bubble-ratio", POINTS, "0", POINTS, "suspicious"),
        "pending": ("bubble-ratio", "", POINTS, POINTS, ""),
        "unknown": ("bubble-ratio", "", POINTS, POINTS, ""),
    }
    assert f"suspicious: cheat bubble-ratio: nbgrader {POINTS}, regrade 0 of {POINTS}" in result.stdout
    assert result.stdout.strip().endswith("1 suspicious, 0 not regraded")
    print(f"regrade of 6 students: {seconds:.1f} s")


def test_a_submission_that_cannot_be_read_exits_1(course):
    submit(course, "honest", SOLUTION)
    broken = course / "submitted" / "broken" / "ch01" / "ch01.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json", encoding="utf-8")
    result, _ = run("ch01", "--course-dir", course)
    assert result.returncode == 1, result.stdout + result.stderr
    rows = read_csv(course / "regrade-ch01.csv")
    assert rows["broken"]["regrade"] == "" and rows["honest"]["regrade"] == POINTS
    assert "NotJSONError" in rows["broken"]["reason"] and rows["honest"]["reason"] == ""
    assert "not regraded: broken bubble-ratio:" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["ch99"], "no notebooks in"),
    (["ch01", "--course-dir", "/nonexistent"], "no such course directory"),
    (["ch01", "--workers", "0"], "--workers must be a positive integer"),
])
def test_bad_usage_is_one_line_and_exit_2(course, capsys, args, message):
    if "--course-dir" not in args:
        args = [*args, "--course-dir", str(course)]
    assert regrade.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("regrade: ") and message in err and err.count("\n") == 1, err
