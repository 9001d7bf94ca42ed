"""Regrade an nbgrader assignment outside any notebook kernel, with the local judge's checker.

    python instructor/regrade.py ch02                     # the course directory instructor/
    python instructor/regrade.py ch02 --course-dir DIR    # another nbgrader course directory
    python instructor/regrade.py ch02 --apply             # also write the trusted scores into gradebook.db

In the kernel, a student's code runs next to the tests and can change what they see (see the README), so
nbgrader's score proves little on its own.  This script grades every submitted notebook
(``submitted/<student>/ASSIGNMENT/*.ipynb``) again, outside any kernel and from a world the kernels could not
have touched:

- **A pristine copy.**  The judge, the course library, the tests and the assignment's source notebooks come from
  the repository's last commit (``git archive HEAD``), not from the files on disk: a kernel that rewrote
  ``course/sim.py`` changes nothing here.  Every file that differs on disk is reported by name.  The modules of
  the Python installation the checker imports (torch, ...) are checked against pip's records of what it
  installed; a modified one is named, and then nothing is regraded (there is no pristine copy of it here).
- **Each student alone.**  A notebook is read with bounds on its size, its cells and their length before anything
  parses it, each cell is parsed once, and any error (a malformed notebook, a cell without source, a crash of
  the grader) gives that student's rows ``not regraded`` with the reason; the others are graded all the same.
- **The kernel's rule.**  The code of each exercise is picked from the student's cells by the rule
  ``load_submission`` uses in the kernel (course/answer_cells.py), then graded by the judge's sandbox: a checker
  process that never imports it, the student's code in a contained process (``practice.sandbox.grade``).  It
  scores by the course's one rule, as the judge and the notebook's test cells do (``course.scoring``): points x
  passed / tests.

It writes ``regrade-ASSIGNMENT.csv`` in the course directory, one row per student and exercise:
``student, exercise, nbgrader, regrade, max, flag, reason``: nbgrader's score from the gradebook (empty when not
autograded), the regrade (empty when not regraded), the exercise's points, the flag (``suspicious`` where
nbgrader's score is higher than the regrade's, ``not regraded``) and why not.  ``--apply`` then writes every
regraded score that differs from nbgrader's into the gradebook (``instructor/apply_scores.py``: the cell's manual
score, a comment saying why, suspicious notebooks flagged), so that the formgrader, the feedback and ``nbgrader
export`` show the trusted scores.  Exit status: 0; 1 when a row is not regraded; 2 for bad usage; 130 when
interrupted.
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ("student", "exercise", "nbgrader", "regrade", "max", "flag", "reason")
TESTS_SUFFIX = "_tests"
PRISTINE = ("course", "practice", "instructor")   # what the regrade takes from the commit
MAX_NOTEBOOK = 32 << 20    # bytes of one submitted notebook
MAX_JSON_DEPTH = 64        # nesting of its JSON (a notebook needs about 6)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class UsageError(Exception):
    """Bad arguments or a course directory without this assignment (exit 2)."""


class NotRegraded(Exception):
    """This student's notebook cannot be regraded; the message says why (one line)."""


@dataclass
class Exercise:
    problem: object        # practice.exercises.Problem
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
    reason: str = ""
    not_passed: tuple[str, ...] = ()   # the regrade's tests that did not pass, "name (verdict[: reason])": summary

    @property
    def flag(self) -> str:
        if self.regrade is None:
            return "not regraded"
        return "suspicious" if self.nbgrader is not None and self.nbgrader > self.regrade else ""

    def cells(self) -> list[str]:
        number = lambda x: "" if x is None else f"{x:g}"  # noqa: E731
        return [self.student, self.exercise, number(self.nbgrader), number(self.regrade), number(self.max),
                self.flag, self.reason]


# ---- the pristine copy ------------------------------------------------------------------------------------------

@dataclass
class Pristine:
    root: Path                 # where course/, practice/ and instructor/ of the commit are
    commit: str                # "" when the repository is not a git checkout (then root is the working tree)
    differences: list[str]     # files on disk that differ from the commit: "course/sim.py (modified)"


@contextlib.contextmanager
def pristine_copy(repository: Path = ROOT):
    """The commit's course/, practice/ and instructor/ in a temporary directory, and what differs on disk.  Not a
    git checkout: the working tree itself, said so."""
    try:
        commit = _git(repository, "rev-parse", "HEAD").decode().strip()
        archive = _git(repository, "archive", "--format=tar", "HEAD", "--", *PRISTINE)
    except (OSError, subprocess.CalledProcessError):
        yield Pristine(repository, "", ["not a git checkout: graded from the files on disk, unverified"])
        return
    with tempfile.TemporaryDirectory(prefix="regrade-pristine-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Pristine(Path(tmp), commit, _differences(Path(tmp), repository))


def _git(repository: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repository), *args], capture_output=True, check=True, timeout=120).stdout


def _differences(pristine: Path, repository: Path) -> list[str]:
    """Files of the commit that are modified or gone on disk, and Python files on disk the commit does not have."""
    found = []
    committed = {p.relative_to(pristine) for p in pristine.rglob("*") if p.is_file()}
    for name in sorted(committed):
        disk = repository / name
        if not disk.is_file():
            found.append(f"{name.as_posix()} (deleted)")
        elif disk.read_bytes() != (pristine / name).read_bytes():
            found.append(f"{name.as_posix()} (modified)")
    for top in ("course", "practice"):
        for disk in sorted((repository / top).rglob("*.py")):
            name = disk.relative_to(repository)
            if name not in committed and "workspace" not in name.parts:
                found.append(f"{name.as_posix()} (added)")
    return found


PROBE = """
import importlib, json, site, sys
sys.path.insert(0, sys.argv[1])
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
loaded = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
with open("/proc/self/maps") as f:
    loaded += [line.split()[-1] for line in f if line.rstrip().endswith(".so") or ".so." in line]
print(json.dumps({"files": sorted({f for f in loaded if f}), "site": site.getsitepackages()}))
"""


def installation_changes(pristine: Path, modules: list[str]) -> list[str]:
    """Files of the Python installation that the checker loads (importing ``modules``) and that are not as pip
    installed them, and .pth files (run by every interpreter at start) that no installed package owns."""
    out = subprocess.run([sys.executable, "-I", "-c", PROBE, str(pristine), json.dumps(modules)],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return [f"the checker's modules do not import: {out.stderr.strip().splitlines()[-1:]}"]
    probe = json.loads(out.stdout)
    return unrecorded([Path(f) for f in probe["files"]], [Path(s) for s in probe["site"]], pristine)


def unrecorded(files: list[Path], sites: list[Path], pristine: Path) -> list[str]:
    """Which of ``files`` (and of the .pth files of ``sites``) inside the site directories differ from the hash
    in their package's RECORD, or belong to no package."""
    from importlib.metadata import distributions

    sites = [s.resolve() for s in sites]
    recorded = {}
    for dist in distributions(path=[str(s) for s in sites]):
        for f in dist.files or ():
            if f.hash is not None:
                recorded[Path(f.locate()).resolve()] = (f.hash.mode, f.hash.value)
    changes = []
    pth = [p for s in sites for p in s.glob("*.pth")]
    for path in sorted({f.resolve() for f in files} | {p.resolve() for p in pth}):
        if not any(path.is_relative_to(s) for s in sites) or path.is_relative_to(pristine.resolve()):
            continue   # the standard library is the interpreter's own; the course comes from the commit
        if path not in recorded:
            if path.suffix in (".py", ".pth", ".so") and path.exists():
                changes.append(f"{path} (installed by no package)")
            continue
        mode, value = recorded[path]
        try:
            digest = base64.urlsafe_b64encode(hashlib.new(mode, path.read_bytes()).digest()).rstrip(b"=").decode()
        except (OSError, ValueError):
            digest = ""
        if digest != value:
            changes.append(f"{path} (modified)")
    return changes


# ---- reading what students handed in ----------------------------------------------------------------------------

def read_notebook(path: Path) -> list[dict]:
    """The cells of a submitted notebook as plain dicts, read with bounds before anything parses them.  Raises
    NotRegraded with a one-line reason."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise NotRegraded(f"no notebook {path.name} ({e.strerror})") from None
    if size > MAX_NOTEBOOK:
        raise NotRegraded(f"{path.name} is {size >> 20} MiB, more than {MAX_NOTEBOOK >> 20} MiB")
    data = path.read_bytes()
    depth = deepest = 0
    for byte in data.translate(None, _NOT_BRACKETS):   # inside strings too: an upper bound, before json parses
        depth += 1 if byte in (91, 123) else -1
        deepest = max(deepest, depth)
    if deepest > MAX_JSON_DEPTH:
        raise NotRegraded(f"{path.name} nests deeper than {MAX_JSON_DEPTH} levels: not a notebook")
    try:
        nb = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise NotRegraded(f"{path.name} is not JSON: {str(e)[:100]}") from None
    cells = nb.get("cells") if type(nb) is dict else None
    if type(cells) is not list:
        raise NotRegraded(f"{path.name} has no list of cells")
    return [c for c in cells if type(c) is dict]


def cell_source(cell: dict) -> str | None:
    """A cell's source as nbformat writes it (a string or a list of strings); None when it is neither."""
    source = cell.get("source", "")
    if type(source) is list and all(type(s) is str for s in source):
        return "".join(source)
    return source if type(source) is str else None


def grade_id(cell: dict) -> str:
    meta = cell.get("metadata")
    nb = meta.get("nbgrader") if type(meta) is dict else None
    gid = nb.get("grade_id") if type(nb) is dict else None
    return gid if type(gid) is str else ""


# ---- the assignment ---------------------------------------------------------------------------------------------

def loaded_names(test_cell_source: str) -> list[str]:
    """The string arguments of the test cell's ``load_submission(...)`` call."""
    for node in ast.walk(ast.parse(test_cell_source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "load_submission":
            return [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return []


def exercises(source: Path, problems: list) -> tuple[list[Exercise], set[str]]:
    """The exercises of the assignment whose source notebooks are in ``source`` (the instructor's copy), and the
    grade ids of its locked cells (what nbgrader restores before it runs a notebook)."""
    notebooks = sorted(source.glob("*.ipynb"))
    if not notebooks:
        raise UsageError(f"no notebooks in {source}: is {source.name!r} an assignment of this course?")
    by_id = {p.grade_id: p for p in problems}
    found, locked = [], set()
    for path in notebooks:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("locked"):
                locked.add(meta.get("grade_id"))
            gid = meta.get("grade_id", "")
            if meta.get("grade") and gid.endswith(TESTS_SUFFIX):
                exercise_id = gid[: -len(TESTS_SUFFIX)]
                if exercise_id not in by_id:
                    raise UsageError(f"{path}: test cell {gid!r} matches no exercise in practice/problems")
                found.append(Exercise(by_id[exercise_id], exercise_id, path.stem, loaded_names(cell_source(cell))))
    if not found:
        raise UsageError(f"{source} has no test cells (grade_id ending in {TESTS_SUFFIX!r})")
    return found, locked


def gradebook_scores(course: Path, assignment: str) -> dict[tuple[str, str], float | None]:
    """(student, test cell grade_id) -> nbgrader's score, for autograded submissions; {} without a gradebook."""
    db = course / "gradebook.db"
    if not db.is_file():
        return {}
    from nbgrader.api import Gradebook, MissingEntry

    scores = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            submissions = gb.assignment_submissions(assignment)
        except MissingEntry:
            return {}
        for submission in submissions:
            for notebook in submission.notebooks:
                for g in notebook.grades:
                    scores[submission.student_id, g.name] = g.auto_score   # in-kernel; a manual score is not nbgrader's
    return scores


# ---- one student ------------------------------------------------------------------------------------------------

def _verdict(result) -> str:
    """A test's verdict for the summary: a failure is the test's own business; a crash, timeout or error also says
    its first line (the judge's reason), which an instructor needs to tell a broken answer from a broken run.  The
    line may quote the student's own exception or exit message: what is not printable (e.g. a terminal escape)
    becomes "?"."""
    if result.verdict == "failed" or not result.message.strip():
        return result.verdict
    line = result.message.strip().splitlines()[0][:160]
    return f"{result.verdict}: " + "".join(c if c.isprintable() else "?" for c in line)


def grade_student(student: str, folder: Path, found: list[Exercise], locked: set[str],
                  nbgrader: dict, workdir: Path) -> list[Row]:
    """One row per exercise for the student whose notebooks are in ``folder``: never raises, never stops."""
    rows = []
    notebooks: dict[str, object] = {}
    for e in found:
        row = Row(student, e.problem.slug, nbgrader.get((student, e.grade_id + TESTS_SUFFIX)), None,
                  float(e.problem.points))
        try:
            if e.notebook not in notebooks:
                notebooks[e.notebook] = _learner_cells(folder / f"{e.notebook}.ipynb", locked)
            cells = notebooks[e.notebook]
            if isinstance(cells, NotRegraded):
                raise cells
            result = _grade_exercise(e, cells, workdir / student)
            row.regrade = result.score   # course.scoring's rule, as the judge and the notebook
            row.not_passed = tuple(f"{r.name} ({_verdict(r)})" for r in result.results if r.verdict != "passed")
        except NotRegraded as why:
            row.reason = str(why)
        except Exception as why:  # noqa: BLE001  (one student, one exercise: never the batch)
            row.reason = f"{type(why).__name__}: {str(why)[:200]}".replace("\n", " ")
        rows.append(row)
    return rows


def _learner_cells(path: Path, locked: set[str]):
    """The notebook's cells parsed once (course.answer_cells.Cells) and where each test cell stands; or the
    NotRegraded that says why not."""
    from course.answer_cells import Cells  # from the pristine copy

    try:
        sources, tests = [], {}
        for cell in read_notebook(path):
            gid = grade_id(cell)
            if gid.endswith(TESTS_SUFFIX):
                tests.setdefault(gid, len(sources))
            if cell.get("cell_type") != "code" or gid in locked:
                continue
            source = cell_source(cell)
            sources.append(source if source is not None else "")
        return Cells(sources), tests
    except NotRegraded as e:
        return e


def _grade_exercise(e: Exercise, learner, workdir: Path):   # -> practice.sandbox.Grade (the pristine copy's)
    from practice.sandbox import grade  # from the pristine copy

    cells, tests = learner
    source, _ = cells.module(e.names, before=tests.get(e.grade_id + TESTS_SUFFIX))
    path = workdir / f"{e.grade_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return grade(e.problem, path)


# ---- the class ----------------------------------------------------------------------------------------------------

@dataclass
class Report:
    rows: list[Row]
    pristine: Pristine
    installation: list[str]


@dataclass
class Regrader:
    """What every student of one assignment is graded against, set up once (see ``regrader``)."""
    pristine: Pristine
    exercises: list[Exercise]
    locked: set[str]
    installation: list[str]    # files of the Python installation not as pip installed them
    workdir: Path              # where each student's modules are written for the judge

    def grade(self, student: str, folder: Path, nbgrader: dict) -> list[Row]:
        """The student's rows (``folder``: their submitted notebooks; ``nbgrader``: (student, test cell) -> score);
        none regraded when the installation is modified (there is no pristine copy of it)."""
        if self.installation:
            why = f"the Python installation is modified: {self.installation[0]}"
            return [Row(student, e.problem.slug, nbgrader.get((student, e.grade_id + TESTS_SUFFIX)), None,
                        float(e.problem.points), why) for e in self.exercises]
        return grade_student(student, folder, self.exercises, self.locked, nbgrader, self.workdir)


@contextlib.contextmanager
def regrader(course: Path, assignment: str, repository: Path = ROOT, source: Path | None = None,
             hidden: tuple[str, ...] = ()):
    """The pristine copy of ``repository``, imported, and the assignment read from it: a ``Regrader``.  The
    assignment's source notebooks are the commit's when ``course`` is the repository's own instructor/, else
    ``source`` (default: the course's own).  The learner process sees neither the repository, nor ``course``, nor
    the ``hidden`` trees.  Only one per process (the judge's modules are imported once)."""
    course = course.resolve()
    with pristine_copy(repository) as pristine, tempfile.TemporaryDirectory(prefix="regrade-") as tmp:
        sys.path.insert(0, str(pristine.root))
        try:
            yield _prepare(course, assignment, repository, pristine, source, hidden, Path(tmp))
        finally:
            sys.path.remove(str(pristine.root))


def _prepare(course: Path, assignment: str, repository: Path, pristine: Pristine, source: Path | None,
             hidden: tuple[str, ...], workdir: Path) -> Regrader:
    from course import answer_cells  # imported here: from the pristine copy
    from practice import sandbox
    from practice.exercises import PROBLEMS, load_problems, read_tests

    for module in (sandbox, answer_cells):
        if not Path(module.__file__).resolve().is_relative_to(pristine.root.resolve()):
            raise UsageError(f"{module.__name__} was already imported from {module.__file__}: run the regrade in a "
                             "fresh process")
    if course == (repository / "instructor").resolve() and pristine.commit:
        source = pristine.root / "instructor" / "source" / assignment   # the assignment as committed
    problems = load_problems(PROBLEMS, pristine.root / "solutions")
    found, locked = exercises(source or course / "source" / assignment, problems)
    for e in found:
        read_tests(e.problem)   # the commit's own tests: a JudgeError here is the commit's, for everyone
    modules = sorted({"practice.checker", "practice.wire", "course.checks", "course.plan"}
                     | {m for e in found for t in e.problem.tests.values() for m in t.imports})
    installation = installation_changes(pristine.root, modules)
    sandbox.HIDDEN[:] = [str(repository), str(course), *hidden]   # the learner process sees none of them
    return Regrader(pristine, found, locked, installation, workdir)


def students(course: Path, assignment: str) -> list[str]:
    """Everyone with a submission of ``assignment`` (``submitted/<student>/<assignment>/``), sorted."""
    submitted = course / "submitted"
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir()) if submitted.is_dir() else []


def regrade(course: Path, assignment: str, workers: int = 2, repository: Path = ROOT) -> Report:
    """Every student's rows, graded from a pristine copy of ``repository`` (see the module docstring)."""
    course = course.resolve()
    with regrader(course, assignment, repository) as r, ThreadPoolExecutor(workers) as pool:
        nbgrader = gradebook_scores(course, assignment)
        per_student = pool.map(lambda s: r.grade(s, course / "submitted" / s / assignment, nbgrader),
                               students(course, assignment))
        rows = [row for rows in per_student for row in rows]
    return Report(rows, r.pristine, r.installation)


def write_csv(rows: list[Row], path: Path) -> None:
    """Written beside ``path`` and renamed over it, as course/files.py writes (not imported: the course this
    process imported is the pristine copy, gone by now), so a failed write leaves the old table whole."""
    text = io.StringIO(newline="")
    out = csv.writer(text)
    out.writerow(COLUMNS)
    out.writerows(row.cells() for row in rows)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text.getvalue())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def notes(report: Report) -> list[str]:
    """The summary's lines about the pristine copy, the installation, the suspicious rows (with the regrade's tests
    that did not pass) and every row's reason (grade.py prints them too)."""
    commit = report.pristine.commit
    lines = [f"  not as committed (graded from the commit): {line}" if commit else f"  {line}"
             for line in report.pristine.differences]
    lines += [f"  the Python installation is modified: {line}" for line in report.installation]
    lines += [f"  suspicious: {r.student} {r.exercise}: nbgrader {r.nbgrader:g}, regrade {r.regrade:g} of {r.max:g}"
              + (f" (not passed: {', '.join(r.not_passed)})" if r.not_passed else "")   # none: a gradebook above max
              for r in report.rows if r.flag == "suspicious"]
    lines += [f"  {'not regraded: ' if r.regrade is None else ''}{r.student} {r.exercise}: {r.reason}"
              for r in report.rows if r.reason]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", help="e.g. ch02")
    parser.add_argument("--course-dir", type=Path, default=Path(__file__).resolve().parent,
                        help="the nbgrader course directory (default: instructor/)")
    parser.add_argument("--workers", type=int, default=2, help="students graded at once (default 2)")
    parser.add_argument("--apply", action="store_true", help="write the regraded scores into gradebook.db (manual "
                        "score and a comment on each changed cell, suspicious notebooks flagged)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        if args.workers < 1:
            raise UsageError(f"--workers must be a positive integer, got {args.workers}")
        if not args.course_dir.is_dir():
            raise UsageError(f"no such course directory: {args.course_dir}")
        report = regrade(args.course_dir, args.assignment, args.workers)
    except KeyboardInterrupt:
        print("regrade: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001  (bad usage, or the commit's own files: one line, no traceback)
        print(f"regrade: {e}".splitlines()[0], file=sys.stderr)
        return 2
    rows = report.rows
    out = args.course_dir / f"regrade-{args.assignment}.csv"
    write_csv(rows, out)
    if args.apply:
        from apply_scores import apply_scores  # beside this script; nbgrader only when asked
        applied = apply_scores(args.course_dir, args.assignment, rows, out.name)
    else:
        applied = []
    failed = [r for r in rows if r.regrade is None]
    suspicious = [r for r in rows if r.flag == "suspicious"]
    n_students, n_exercises = len({r.student for r in rows}), len({r.exercise for r in rows})
    commit = report.pristine.commit
    print(f"regraded {args.assignment} from commit {commit[:12]}: " if commit else f"regraded {args.assignment}: ",
          end="")
    print(f"{n_students} students x {n_exercises} exercises in {time.monotonic() - start:.0f} s -> {out}")
    for line in notes(report):
        print(line)
    for line in applied:
        print(f"  gradebook: {line}")
    print(f"{len(suspicious)} suspicious, {len(failed)} not regraded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
