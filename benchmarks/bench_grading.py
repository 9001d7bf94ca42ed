"""Grading a class in parallel: ``instructor/grade.py --jobs 2`` against the serial way, measured in the same run.

A class of 40 synthetic submissions of ch01 (10 each: honest, the reference answers; blank, the release as fetched;
tampered, setup and test cells rewritten to ``assert True``; noisy, the reference answers printing to stderr and
warning) is graded twice, from two copies of one course directory:

- serially, the way grade.py replaces: ``nbgrader autograde ch01`` (one process, one student after another), then
  ``python instructor/regrade.py ch01 --workers 1``;
- by ``python instructor/grade.py ch01 --jobs 2``, which does both, one student per job.

Both must give identical scores: the same gradebook (every test cell's score) and the same regrade CSV.  Two rounds,
each side in turn, from fresh copies; printed: every wall-clock time and the ratio of the best grade.py run to the
best serial one (the serial autograde alone is printed too).  Target: ratio <= 0.6 on 2 cores (ideal 0.5, plus
grade.py's start and the grading processes' own imports).  Exit 1 on a miss or on any difference.  The machine's
other load shifts both sides (the parallel side more, as it needs both cores): run it on an otherwise idle machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"
ASSIGNMENT, PER_KIND, ROUNDS, TARGET = "ch01", 10, 2, 0.6
KINDS = ("honest", "blank", "tampered", "noisy")
NOISE = "import sys, warnings\nprint('working on it', file=sys.stderr)\nwarnings.warn('noisy but right')\n"


def submission(kind: str, release: nbformat.NotebookNode, solutions: dict[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.from_dict(release)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and kind in ("honest", "noisy"):
            cell.source = (NOISE if kind == "noisy" else "") + solutions[meta["grade_id"]]
        if kind == "tampered" and meta.get("locked") and cell.cell_type == "code":
            cell.source = "load_submission = print\nassert True" if meta["grade_id"] == "setup" else "assert True"
    return nb


def make_class(course: Path) -> None:
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    course.mkdir(parents=True)
    shutil.copy(INSTRUCTOR / "nbgrader_config.py", course)
    shutil.copytree(INSTRUCTOR / "source" / ASSIGNMENT, course / "source" / ASSIGNMENT)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    result = NbGraderAPI(config=config).generate_assignment(ASSIGNMENT)
    if not result["success"]:
        raise SystemExit(f"bench_grading: nbgrader generate_assignment failed:\n{result.get('log')}")
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    solutions = {c.metadata.nbgrader["grade_id"]: c.source
                 for c in nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4).cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    for i in range(PER_KIND * len(KINDS)):
        kind = KINDS[i % len(KINDS)]
        folder = course / "submitted" / f"{kind}-{i:02d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(submission(kind, release, solutions), folder / f"{ASSIGNMENT}.ipynb")
        (folder / "timestamp.txt").write_text("2026-03-01 12:00:00.000000 UTC")


def timed(cmd: list[str], cwd: Path, env: dict) -> float:
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"bench_grading: {' '.join(cmd[1:3])} exited {result.returncode}:\n"
                         f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return seconds


def scores(course: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(s.student_id, g.name): g.score for s in gb.assignment_submissions(ASSIGNMENT)
                for nb in s.notebooks for g in nb.grades}


def main() -> int:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    autograde, regrade, graded, same = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        template = Path(tmp) / "template"
        make_class(template)
        for i in range(ROUNDS):   # alternating, so that a burst of the machine's other load hits both sides alike
            serial, parallel = Path(tmp) / f"serial-{i}", Path(tmp) / f"parallel-{i}"
            shutil.copytree(template, serial)
            shutil.copytree(template, parallel)
            autograde.append(timed([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT], serial, env))
            regrade.append(timed([sys.executable, str(INSTRUCTOR / "regrade.py"), ASSIGNMENT, "--course-dir",
                                  str(serial), "--workers", "1"], ROOT, env))
            graded.append(timed([sys.executable, str(INSTRUCTOR / "grade.py"), ASSIGNMENT, "--course-dir",
                                 str(parallel), "--jobs", "2"], ROOT, env))
            same.append((scores(serial) == scores(parallel),
                         (serial / f"regrade-{ASSIGNMENT}.csv").read_text()
                         == (parallel / f"regrade-{ASSIGNMENT}.csv").read_text()))
            students = len({s for s, _ in scores(parallel)})
    serial_best = min(a + r for a, r in zip(autograde, regrade))
    ratio = min(graded) / serial_best
    print(f"{students} submissions of {ASSIGNMENT} ({PER_KIND} each: {', '.join(KINDS)}), {os.cpu_count()} cores, "
          f"best of {ROUNDS} alternating rounds")
    print(f"serial: nbgrader autograde + regrade.py --workers 1: "
          f"{', '.join(f'{a:.1f} + {r:.1f} s' for a, r in zip(autograde, regrade))}")
    print(f"grade.py --jobs 2: {', '.join(f'{g:.1f} s' for g in graded)} -> ratio {ratio:.2f} (target <= {TARGET:g}); "
          f"against the serial autograde alone {min(graded) / min(autograde):.2f}")
    print(f"identical gradebook scores: {all(s for s, _ in same)}; identical regrade CSV: {all(c for _, c in same)}")
    if not all(s and c for s, c in same):
        print("bench_grading: the two ways disagree")
        return 1
    if ratio > TARGET:
        print(f"bench_grading: missed the target ({ratio:.2f} > {TARGET:g})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
