"""Autograde and regrade a whole class in parallel: on this machine, or on a Dask cluster.

    python instructor/grade.py ch02 --jobs 4                    # the course directory instructor/, 4 at a time
    python instructor/grade.py ch02 --course-dir DIR            # another nbgrader course directory
    python instructor/grade.py ch02 --engine dask               # a Dask LocalCluster on this machine
    python instructor/grade.py ch02 --engine dask --scheduler tcp://10.0.0.5:8786

What ``nbgrader autograde ch02`` followed by ``python instructor/regrade.py ch02`` does, one student per job: every
submitted notebook (``submitted/<student>/ch02/``, after ``nbgrader collect``) is autograded by nbgrader in a
grading process with its own copy of the gradebook, and regraded there out of the kernel (instructor/grading.py);
each finished student is then written to the course: the autograded notebooks, the student's rows merged into the
course gradebook in one transaction, and their regrade rows.  At the end ``regrade-ch02.csv`` holds every student
(the columns of instructor/regrade.py; ``reason`` says why a row could not be graded as usual: a notebook that is
not JSON, a cell whose kernel died or that never ended, a grading process that died or ran past its limit).

- ``--jobs N`` (default: the number of cores) is a number of slots.  A job takes as many as its exercises keep
  processes busy (``processes`` in problem.md: live-1f1b starts 4 gloo ranks), so N slots never run more than N
  processes of student code; the live runtime picks its own free ports, so jobs never collide on one.
- Safe to interrupt (Ctrl-C, SIGTERM): the course gradebook is left with every student finished so far and nothing
  of the others; a rerun grades only the students still missing (or whose submission changed).  ``--force``
  grades everyone again.
- A broken notebook costs its own student's points only: nbgrader's failure and each grading process are contained
  (a job that runs past ``--job-timeout`` or kills its process is stopped, counted in the CSV, and tried again on
  the next run).
- ``--engine dask`` sends the same jobs to a Dask distributed cluster (``pip install -e '.[dask]'``): at
  ``--scheduler ADDRESS``, or a LocalCluster on 127.0.0.1 with N slots.  Its workers need this repository at the same
  path and its environment (the same image as the hub); start them with ``--resources slots=K`` so that live jobs
  are counted there too.

Exit status: 0; 1 when a submission could not be graded (its reason is in the CSV); 2 for bad usage; 130 or 143
when interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

import grading  # noqa: E402  (instructor/grading.py)
import regrade  # noqa: E402  (instructor/regrade.py)

from practice.exercises import JudgeError, load_problems  # noqa: E402

STATE = ".grade"   # in the course directory: one file per finished student and assignment


class UsageError(Exception):
    """Bad arguments or a course directory that cannot be graded (exit 2)."""


@dataclass
class Job:
    student: str
    files: dict[str, bytes]    # submitted/<student>/<assignment>/..., by relative path
    digest: str                # of the files: a changed submission is graded again

    def message(self) -> dict:
        return {"student": self.student, "files": self.files}


@dataclass
class Plan:
    course: Path
    assignment: str
    db_url: str
    exercises: list            # regrade.Exercise, in the notebooks' order
    students: list[str]        # everyone who submitted, sorted
    jobs: list[Job]            # those still to grade
    weight: int                # slots one job takes
    timeout: float             # seconds one job may take

    @property
    def state(self) -> Path:
        return self.course / STATE / self.assignment


# ---- planning -----------------------------------------------------------------------------------------------------

def cell_limits(config, notebook) -> float:
    """Seconds nbgrader may spend on ``notebook``: each code cell's limit (the course's ``Execute.timeout_func``),
    plus a kernel start for the notebook and for each restart after a stuck cell."""
    limit_of = config.Execute.get("timeout_func") or (lambda cell: config.Execute.get("timeout", 30))
    startup = config.Execute.get("startup_timeout", 60)
    return startup + sum(limit_of(c) + startup for c in notebook.cells if c.cell_type == "code")


def plan(course: Path, assignment: str, force: bool = False, job_timeout: float | None = None) -> Plan:
    import nbformat
    from nbgrader.coursedir import CourseDirectory

    if not course.is_dir():
        raise UsageError(f"no such course directory: {course}")
    exercises, _ = regrade.exercises(course / "source" / assignment, load_problems())   # to plan: the regrade
    # reads the exercises again, from its pristine copy
    config = grading.nbgrader_config(course)
    db_url = CourseDirectory(config=config).db_url
    if not db_url.startswith("sqlite:///"):
        raise UsageError(f"grade.py copies the gradebook for each grading process: it needs SQLite, not {db_url}")
    if not gradebook_path(db_url).is_file():
        raise UsageError(f"no gradebook at {gradebook_path(db_url)}: run nbgrader generate_assignment {assignment}")
    students = regrade.students(course, assignment)
    if not students:
        raise UsageError(f"nobody has submitted {assignment} in {course / 'submitted'}: run nbgrader collect "
                         f"{assignment}")
    notebooks = sorted((course / "source" / assignment).glob("*.ipynb"))
    timeout = job_timeout or (sum(cell_limits(config, nbformat.read(p, as_version=4)) for p in notebooks)
                              + sum(2 * e.problem.timeout + 30 for e in exercises))   # the regrade: two test files
    state = course / STATE / assignment
    graded = gradebook_students(db_url, assignment)
    jobs = []
    for student in students:
        files = grading.read_tree(course / "submitted" / student / assignment)
        job = Job(student, files, grading.digest(files))
        if force or not finished(state, course, assignment, job, graded):
            jobs.append(job)
    return Plan(course, assignment, db_url, exercises, students, jobs,
                max(e.problem.processes for e in exercises), timeout)


def gradebook_path(db_url: str) -> Path:
    return Path(db_url[len("sqlite:///"):].split("?", 1)[0])


def gradebook_students(db_url: str, assignment: str) -> set[str]:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        try:
            return {s.student_id for s in gb.assignment_submissions(assignment)}
        except MissingEntry:
            raise UsageError(f"{assignment} is not in the gradebook: "
                             f"run nbgrader generate_assignment {assignment}") from None


def finished(state: Path, course: Path, assignment: str, job: Job, graded: set[str]) -> bool:
    """Graded by an earlier run, from the same files, with everything written."""
    try:
        saved = json.loads((state / f"{job.student}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (saved.get("digest") == job.digest and job.student in graded
            and (not saved.get("autograded") or (course / "autograded" / job.student / assignment).is_dir()))


def context(p: Plan) -> dict:
    """What every grading process receives once: the course's nbgrader configuration, the assignment's source and a
    snapshot of the gradebook (SQLite's online backup: consistent even while the formgrader writes)."""
    config = p.course / "nbgrader_config.py"
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        copy = Path(tmp) / "gradebook.db"
        with closing(sqlite3.connect(gradebook_path(p.db_url))) as src, closing(sqlite3.connect(copy)) as dst:
            src.backup(dst)
        gradebook = copy.read_bytes()
    ctx = {"repo": str(ROOT), "course": str(p.course), "assignment": p.assignment,
           "config": config.read_text(encoding="utf-8") if config.is_file() else "",
           "source": grading.read_tree(p.course / "source" / p.assignment), "gradebook": gradebook}
    ctx["digest"] = grading.digest(ctx["config"], ctx["source"], gradebook)
    return ctx


# ---- engines: each calls on_result(job, result) in this thread, as results come, until done or stopped ----------

def collect(futures: dict, stop: threading.Event, on_result) -> set:
    """Hand each future's result to ``on_result`` (in this thread) as it comes, until all are done or ``stop`` is
    set; the futures left pending."""
    pending = set(futures)
    while pending and not stop.is_set():
        done = {f for f in pending if f.done()}
        for f in done:
            on_result(futures[f], f.result())
        pending -= done
        if not done:
            stop.wait(0.1)
    return pending


def run_local(p: Plan, ctx: dict, slots: int, stop: threading.Event, on_result) -> None:
    """``slots // weight`` grading processes on this machine (at least one), one student at a time each."""
    width = max(1, slots // p.weight)
    logs = p.state / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    idle: queue.SimpleQueue = queue.SimpleQueue()
    handles = []
    for i in range(min(width, len(p.jobs))):
        log = open(logs / f"worker-{i}.log", "wb")
        handles.append((grading.Worker(ctx, log=log), log))
        idle.put(handles[-1][0])

    def grade(job: Job) -> dict:
        worker = idle.get()
        try:
            return worker.grade(job.message(), p.timeout)
        finally:
            idle.put(worker)

    pool = ThreadPoolExecutor(len(handles))
    try:
        futures = {pool.submit(grade, job): job for job in p.jobs}
        collect(futures, stop, on_result)
    finally:
        for f in futures:
            f.cancel()
        for worker, _ in handles:
            worker.kill(close=True) if stop.is_set() else worker.close()
        pool.shutdown(wait=True)
        for _, log in handles:
            log.close()


def run_dask(p: Plan, ctx: dict, slots: int, stop: threading.Event, on_result, scheduler: str | None) -> None:
    """The same jobs as Dask tasks: on the cluster at ``scheduler``, or on a LocalCluster with ``slots`` slots."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--engine dask needs Dask: pip install -e '.[dask]'") from None
    scratch = tempfile.TemporaryDirectory(prefix="grade-dask-")   # the LocalCluster's files, removed at the end
    dask.config.set({"temporary-directory": scratch.name})
    cluster = None if scheduler else LocalCluster(
        n_workers=1, threads_per_worker=slots, resources={"slots": slots}, host="127.0.0.1",
        dashboard_address=None, processes=True)
    try:
        client = Client(scheduler or cluster, timeout="30s")
    except OSError as e:
        if cluster:
            cluster.close()
        scratch.cleanup()
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    try:
        client.upload_file(grading.__file__)    # the task function, importable on every worker
        widest = [w.get("resources", {}).get("slots", 0) for w in client.scheduler_info()["workers"].values()]
        if widest and all(widest):
            resources = {"slots": min(p.weight, max(widest))}
        else:
            resources = None
            print("grade: the Dask workers declare no 'slots' resource (dask worker --resources slots=K): each runs "
                  "one job per thread, whatever its exercises start", file=sys.stderr)
        shared = client.scatter(ctx, broadcast=True)
        futures = {client.submit(grading.on_dask, job.message(), shared, p.timeout, resources=resources,
                                 key=f"grade-{p.assignment}-{job.student}-{job.digest[:12]}", pure=False): job
                   for job in p.jobs}
        pending = collect(futures, stop, on_result)
        if pending:
            client.cancel(list(pending))
        client.run(grading.stop_dask_workers, stop.is_set())
    finally:
        client.close()
        if cluster:
            cluster.close()
        scratch.cleanup()


# ---- writing a finished student ----------------------------------------------------------------------------------

def reasons(p: Plan, result: dict) -> list[regrade.Row]:
    """The regrade's rows, each with the first reason that applies: the regrade's own (the notebook could not be
    regraded), a cell whose kernel had to be restarted, nbgrader's failure on the whole notebook."""
    by_slug = {e.problem.slug: e for e in p.exercises}
    rows = []
    for fields in result["rows"]:
        row = regrade.Row(**fields)
        e = by_slug[row.exercise]
        cell = result["cell_failures"].get(f"{e.grade_id}{regrade.TESTS_SUFFIX}") or \
            result["cell_failures"].get(e.grade_id)
        row.reason = row.reason or (f"nbgrader: {cell}" if cell else "") or \
            (f"nbgrader: {result['autograde_error']}" if result["autograde_error"] else "")
        rows.append(row)
    return rows


def failed_rows(p: Plan, student: str, reason: str) -> list[regrade.Row]:
    return [regrade.Row(student, e.problem.slug, None, None, float(e.problem.points), reason) for e in p.exercises]


def replace_directory(target: Path, files: dict[str, bytes]) -> None:
    """``target`` holds exactly ``files`` afterwards (written aside, then swapped in)."""
    new, old = target.with_name(f".{target.name}.new"), target.with_name(f".{target.name}.old")
    for leftover in (new, old):
        shutil.rmtree(leftover, ignore_errors=True)
    if files:
        grading.write_tree(new, files)
    if target.exists():
        target.rename(old)
    if files:
        new.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def merge(db_url: str, records: list[tuple[str, dict]]) -> None:
    """The student's gradebook rows from a grading process into the course gradebook, in one transaction (rows with
    the same id are updated: a submission graded before keeps its id and its manual grades)."""
    from nbgrader import api

    with api.Gradebook(db_url) as gb:
        for model_name, columns in records:
            model = getattr(api, model_name)
            if model is api.Student and gb.db.get(api.Student, columns["id"]) is not None:
                continue   # the roster's names stay as the instructor wrote them
            gb.db.merge(model(**columns))
        gb.db.commit()


def account_for(db_url: str, assignment: str, student: str) -> None:
    """A submission that could not be graded is still in the gradebook (with no score)."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        gb.update_or_create_student(student)
        gb.update_or_create_submission(assignment, student)


def write_state(p: Plan, job: Job, rows: list[regrade.Row], autograded: bool) -> None:
    path = p.state / f"{job.student}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"digest": job.digest, "autograded": autograded,
                               "rows": [asdict(r) for r in rows]}), encoding="utf-8")
    os.replace(tmp, path)


def saved_rows(p: Plan, student: str) -> list[regrade.Row]:
    saved = json.loads((p.state / f"{student}.json").read_text(encoding="utf-8"))
    return [regrade.Row(**fields) for fields in saved["rows"]]


def commit(p: Plan, job: Job, result: dict) -> list[regrade.Row]:
    """Write one student's result to the course: autograded files, gradebook, regrade rows (in that order; the rows
    last, so a student counts as finished only once everything is written)."""
    if "failed" in result:
        account_for(p.db_url, p.assignment, job.student)
        return failed_rows(p, job.student, result["failed"])
    rows = reasons(p, result)
    replace_directory(p.course / "autograded" / job.student / p.assignment, result["autograded"])
    try:
        merge(p.db_url, result["records"])
    except Exception as e:  # noqa: BLE001  (e.g. the gradebook changed meanwhile: this student only, next run)
        return failed_rows(p, job.student, f"could not write to the gradebook: {type(e).__name__}: {e}"[:200])
    write_state(p, job, rows, bool(result["autograded"]))
    return rows


def summary(rows: list[regrade.Row]) -> str:
    def total(attr: str) -> str:
        scores = [getattr(r, attr) for r in rows if getattr(r, attr) is not None]
        return f"{sum(scores):g}" if scores else "-"
    return f"nbgrader {total('nbgrader')}, regrade {total('regrade')} of {total('max')}"


# ---- the command --------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", help="e.g. ch02")
    parser.add_argument("--course-dir", type=Path, default=HERE, help="the nbgrader course directory (default: "
                                                                      "instructor/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="slots: processes of student code at once (default: the number of cores)")
    parser.add_argument("--engine", choices=("local", "dask"), default="local")
    parser.add_argument("--scheduler", help="a Dask scheduler's address (--engine dask; default: a LocalCluster)")
    parser.add_argument("--force", action="store_true", help="grade every submission again")
    parser.add_argument("--job-timeout", type=float,
                        help="seconds one student may take (default: the assignment's cell limits and the regrade's)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        if type(args.jobs) is not int or args.jobs < 1:
            raise UsageError(f"--jobs must be a positive integer, got {args.jobs}")
        if args.scheduler and args.engine != "dask":
            raise UsageError("--scheduler needs --engine dask")
        if args.job_timeout is not None and not 0 < args.job_timeout < 86400:
            raise UsageError(f"--job-timeout must be a number of seconds in (0, 86400), got {args.job_timeout}")
        p = plan(args.course_dir.resolve(), args.assignment, args.force, args.job_timeout)
    except (UsageError, regrade.UsageError, JudgeError) as e:
        print(f"grade: {e}", file=sys.stderr)
        return 2

    stop, signals = threading.Event(), []

    def on_signal(signum, _frame):
        signals.append(signum)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    done_before = len(p.students) - len(p.jobs)
    print(f"grading {p.assignment}: {len(p.jobs)} of {len(p.students)} submissions ({done_before} graded before), "
          f"{p.weight} slot{'s' if p.weight > 1 else ''} each of {args.jobs}, engine {args.engine}", flush=True)
    fresh: dict[str, list[regrade.Row]] = {}
    regraded: dict = {}   # what the regrade said about its pristine copy and the installation

    def on_result(job: Job, result: dict) -> None:
        rows = fresh[job.student] = commit(p, job, result)
        if "pristine" in result:
            regraded.update(result["pristine"], installation=result["installation"])
        how = result.get("failed") or f"{result['seconds']:.0f} s"
        print(f"  {job.student} ({len(fresh)}/{len(p.jobs)}): {summary(rows)} ({how})", flush=True)

    try:
        if p.jobs:
            ctx = context(p)
            if args.engine == "dask":
                run_dask(p, ctx, args.jobs, stop, on_result, args.scheduler)
            else:
                run_local(p, ctx, args.jobs, stop, on_result)
    except UsageError as e:
        print(f"grade: {e}", file=sys.stderr)
        return 2
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if stop.is_set():
        print(f"interrupted: {done_before + len(fresh)} of {len(p.students)} submissions graded and saved; run the "
              "same command again to grade the rest", flush=True)
        return 128 + signals[0]

    rows = [r for s in p.students for r in (fresh[s] if s in fresh else saved_rows(p, s))]
    out = p.course / f"regrade-{p.assignment}.csv"
    regrade.write_csv(rows, out)
    pristine = regrade.Pristine(ROOT, regraded.get("commit", ""), regraded.get("differences", []))
    report = regrade.Report(rows, pristine, regraded.get("installation", []))
    failed = [r for r in rows if r.reason]
    print(f"graded {p.assignment}" + (f" (regraded from commit {pristine.commit[:12]})" if pristine.commit else "")
          + f": {len(p.students)} students in {time.monotonic() - started:.0f} s -> {out}")
    for line in regrade.notes(report):
        print(line)
    print(f"{sum(r.flag == 'suspicious' for r in rows)} suspicious, {len({r.student for r in failed})} with a reason")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
