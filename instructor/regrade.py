"""Regrade an nbgrader assignment outside any notebook kernel, with the local judge's checker.

    python instructor/regrade.py ch02                     # the course directory instructor/
    python instructor/regrade.py ch02 --course-dir DIR    # another nbgrader course directory

In the kernel, a student's code runs next to the tests and can change what they see (see the README), so
nbgrader's score proves little on its own.  This script takes every submitted notebook
(``submitted/<student>/ASSIGNMENT/*.ipynb``) and, for each exercise of the assignment (a test cell ``<id>_tests``
in ``source/ASSIGNMENT/``), writes the cells that define the names the tests import to one file, as
``load_submission`` does in the kernel (the last cell that defines each name).  The judge grades that file: a
checker process that never imports it, the student's code in a contained process (``practice.sandbox.grade``).
As in the notebook, an exercise scores its points only when all its public and hidden tests pass.

It writes ``regrade-ASSIGNMENT.csv`` in the course directory, one row per student and exercise:
``student, exercise, nbgrader, regrade, max, flag, reason``: nbgrader's score from the gradebook (empty when not
autograded), the regrade, the exercise's points, ``suspicious`` where nbgrader's score is higher than the
regrade's, and why the row could not be regraded (empty when it was).  Exit status: 0; 1 when a submission could
not be regraded (its row has an empty regrade); 2 for bad usage.
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from practice.exercises import JudgeError, Problem, load_problems  # noqa: E402
from practice.sandbox import grade  # noqa: E402

COLUMNS = ("student", "exercise", "nbgrader", "regrade", "max", "flag", "reason")
TESTS_SUFFIX = "_tests"


class UsageError(Exception):
    """Bad arguments or a course directory without this assignment (exit 2)."""


@dataclass
class Exercise:
    problem: Problem
    grade_id: str          # of the solution cell; the test cell is grade_id + "_tests"
    notebook: str          # the notebook's name without .ipynb
    names: list[str]       # what the test cell passes to load_submission


@dataclass
class Row:
    student: str
    exercise: str
    nbgrader: float | None
    regrade: float | None
    max: float
    error: str = ""

    @property
    def flag(self) -> str:
        suspicious = self.nbgrader is not None and self.regrade is not None and self.nbgrader > self.regrade
        return "suspicious" if suspicious else ""

    def cells(self) -> list[str]:
        number = lambda x: "" if x is None else f"{x:g}"  # noqa: E731
        return [self.student, self.exercise, number(self.nbgrader), number(self.regrade), number(self.max),
                self.flag, self.error]


def nbgrader_meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def loaded_names(test_cell_source: str) -> list[str]:
    """The string arguments of the test cell's ``load_submission(...)`` call."""
    for node in ast.walk(ast.parse(test_cell_source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "load_submission":
            return [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return []


def exercises(course: Path, assignment: str, problems: list[Problem]) -> list[Exercise]:
    """The exercises of ``assignment``, read from its source notebooks (the instructor's copy)."""
    source = course / "source" / assignment
    notebooks = sorted(source.glob("*.ipynb"))
    if not notebooks:
        raise UsageError(f"no notebooks in {source}: is {assignment!r} an assignment of this course?")
    by_id = {p.slug.replace("-", "_"): p for p in problems}
    found = []
    for path in notebooks:
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = nbgrader_meta(cell).get("grade_id", "")
            if nbgrader_meta(cell).get("grade") and grade_id.endswith(TESTS_SUFFIX):
                exercise_id = grade_id[: -len(TESTS_SUFFIX)]
                if exercise_id not in by_id:
                    raise UsageError(f"{path}: test cell {grade_id!r} matches no exercise in practice/problems")
                found.append(Exercise(by_id[exercise_id], exercise_id, path.stem, loaded_names(cell.source)))
    if not found:
        raise UsageError(f"{source} has no test cells (grade_id ending in {TESTS_SUFFIX!r})")
    return found


def defined_names(source: str) -> set[str]:
    """Top-level functions and classes a cell defines (none when it does not parse: it could not run either)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return set()
    return {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def submission_source(nb, exercise: Exercise, locked: set[str]) -> str:
    """The student's cells for ``exercise``: for each name, the last cell that defines it (what the kernel would
    have bound last), in the order load_submission takes them; the solution cell itself when none does."""
    own = [c for c in nb.cells if c.get("cell_type") == "code" and nbgrader_meta(c).get("grade_id") not in locked]
    chosen: list[int] = []
    for name in exercise.names:
        cells = [i for i, c in enumerate(own) if name in defined_names(c.source)]
        if cells and cells[-1] not in chosen:
            chosen.append(cells[-1])
    if not chosen:
        chosen = [i for i, c in enumerate(own) if nbgrader_meta(c).get("grade_id") == exercise.grade_id][:1]
    return "\n\n".join(own[i].source for i in chosen) + "\n"


def gradebook_scores(course: Path, assignment: str) -> dict[tuple[str, str], float | None]:
    """(student, test cell grade_id) -> nbgrader's score, for autograded submissions; {} without a gradebook."""
    db = course / "gradebook.db"
    if not db.is_file():
        return {}
    from nbgrader.api import Gradebook, MissingEntry  # noqa: PLC0415

    scores = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            submissions = gb.assignment_submissions(assignment)
        except MissingEntry:
            return {}
        for submission in submissions:
            for notebook in submission.notebooks:
                for g in notebook.grades:
                    graded = g.auto_score is not None or g.manual_score is not None
                    scores[submission.student_id, g.name] = g.score if graded else None
    return scores


def regrade_one(student: str, exercise: Exercise, source: str | None, workdir: Path) -> tuple[float | None, str]:
    if source is None:
        return None, "no notebook"
    path = workdir / student / f"{exercise.grade_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    try:
        result = grade(exercise.problem, path)
    except JudgeError:
        raise   # the judge's own files are wrong: nothing can be regraded
    except Exception as e:  # noqa: BLE001  (one submission that cannot be graded must not stop the others)
        return None, f"{type(e).__name__}: {e}"[:200]
    return (float(exercise.problem.points) if result.failed == 0 else 0.0), ""


def regrade(course: Path, assignment: str, workers: int = 2) -> list[Row]:
    problems = load_problems()
    found = exercises(course, assignment, problems)
    locked = {nbgrader_meta(c).get("grade_id") for path in (course / "source" / assignment).glob("*.ipynb")
              for c in nbformat.read(path, as_version=4).cells if nbgrader_meta(c).get("locked")}
    submitted = course / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir()) if submitted.is_dir() else []
    nbgrader = gradebook_scores(course, assignment)
    jobs, errors = [], {}
    for student in students:
        notebooks = {}
        for name in {e.notebook for e in found}:
            try:
                notebooks[name] = nbformat.read(submitted / student / assignment / f"{name}.ipynb", as_version=4)
            except (OSError, ValueError) as e:   # missing or not a notebook
                errors[student, name] = f"{type(e).__name__}: {e}"[:200]
        for e in found:
            nb = notebooks.get(e.notebook)
            jobs.append((student, e, None if nb is None else submission_source(nb, e, locked)))
    with tempfile.TemporaryDirectory(prefix="regrade-") as tmp, ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda job: regrade_one(*job, Path(tmp)), jobs))
    rows = []
    for (student, e, _), (score, error) in zip(jobs, results):
        error = error and errors.get((student, e.notebook), error)
        rows.append(Row(student, e.problem.slug, nbgrader.get((student, e.grade_id + TESTS_SUFFIX)), score,
                        float(e.problem.points), error))
    return rows


def write_csv(rows: list[Row], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        out.writerows(row.cells() for row in rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", help="e.g. ch02")
    parser.add_argument("--course-dir", type=Path, default=Path(__file__).resolve().parent,
                        help="the nbgrader course directory (default: instructor/)")
    parser.add_argument("--workers", type=int, default=2, help="submissions graded at once (default 2)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        if args.workers < 1:
            raise UsageError(f"--workers must be a positive integer, got {args.workers}")
        if not args.course_dir.is_dir():
            raise UsageError(f"no such course directory: {args.course_dir}")
        rows = regrade(args.course_dir, args.assignment, args.workers)
    except (UsageError, JudgeError) as e:
        print(f"regrade: {e}", file=sys.stderr)
        return 2
    out = args.course_dir / f"regrade-{args.assignment}.csv"
    write_csv(rows, out)
    failed = [r for r in rows if r.regrade is None]
    suspicious = [r for r in rows if r.flag]
    students, exercises_ = len({r.student for r in rows}), len({r.exercise for r in rows})
    print(f"regraded {args.assignment}: {students} students x {exercises_} exercises in "
          f"{time.monotonic() - start:.0f} s -> {out}")
    for r in suspicious:
        print(f"  suspicious: {r.student} {r.exercise}: nbgrader {r.nbgrader:g}, regrade {r.regrade:g} of {r.max:g}")
    for r in failed:
        print(f"  not regraded: {r.student} {r.exercise}: {r.error}")
    print(f"{len(suspicious)} suspicious, {len(failed)} not regraded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
