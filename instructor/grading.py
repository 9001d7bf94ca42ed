"""One student's autograde and regrade, in a grading process of its own (instructor/grade.py sends the jobs).

A grading process (this file run as a script; ``Worker`` starts and talks to it) receives a *context* once: the
course's ``nbgrader_config.py``, the assignment's source files and a copy of the course gradebook.  It lays them out
as a private course directory, so the gradebook it writes is its own copy.  Then, for each *job* (one student's
submitted files), it:

1. runs nbgrader's autograde for that student (``NbGraderAPI.autograde``, the course's configuration);
2. reads back what autograde wrote: the autograded files and the student's rows of the gradebook;
3. regrades the same notebook out of the kernel, as ``instructor/regrade.py`` does: in a regrade process of its own
   (``Regrade``), which sets up ``regrade.regrader`` once (the pristine copy of this machine's repository, the
   installation check) and grades each student with ``Regrader.grade``, against the gradebook's new scores;

and answers with all of it as plain data.  The only path of the instructor's machine it receives is the course
directory's, which the regrade hides from the learner and compares with the repository's instructor/ (the one
course whose source notebooks are taken from the commit); so the same jobs run on a Dask worker elsewhere
(``on_dask``), given this repository and its environment there.

Messages are pickled dicts, each prefixed by its length, on the process's stdin and on a copy of its stdout (its
own stdout and stderr go to the log).  Pickle trusts the other side: the grading process runs as the same user as
grade.py, which nbgrader's kernels already do (the students' code could write to the course directory anyway).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

import psutil

HERE = Path(__file__).resolve()
# Failures that course/autograde.py records in a cell (the kernel was restarted): a reason worth a CSV column.
GRADING_ERRORS = ("CellTimeoutError", "DeadKernelError")


# ---- messages ----------------------------------------------------------------------------------------------------

def send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def receive(stream):
    """The next message, or None at the end of the stream."""
    header = stream.read(8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack(">Q", header)
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, by path relative to it."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} \
        if root.is_dir() else {}


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def digest(*parts: dict[str, bytes] | bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        items = sorted(part.items()) if isinstance(part, dict) else [("", part)]
        for name, data in items:
            h.update(name.encode() + b"\0" + (data.encode() if isinstance(data, str) else data) + b"\0")
    return h.hexdigest()


# ---- the grading process -----------------------------------------------------------------------------------------

def nbgrader_config(root: Path):
    """The configuration ``nbgrader`` itself would load in course directory ``root`` (the Jupyter config path, then
    ``root/nbgrader_config.py``), with ``root`` as the course directory."""
    from nbgrader.apps.nbgraderapp import NbGraderApp
    from traitlets.config import Config

    here = os.getcwd()
    os.chdir(root)
    try:
        app = NbGraderApp()
        app.load_config_file()
    finally:
        os.chdir(here)
    config = app.config
    overrides = Config()
    overrides.CourseDirectory.root = str(root)
    config.merge(overrides)
    return config


def submission_records(db_url: str, assignment: str, student: str) -> list[tuple[str, dict]]:
    """The student's rows for ``assignment`` in the gradebook, as (model name, columns), parents first."""
    import sqlalchemy
    from nbgrader.api import Gradebook

    def columns(obj) -> tuple[str, dict]:
        return type(obj).__name__, {a.key: getattr(obj, a.key) for a in sqlalchemy.inspect(type(obj)).column_attrs}

    with Gradebook(db_url) as gb:
        submission = gb.find_submission(assignment, student)
        notebooks = list(submission.notebooks)
        return [columns(o) for o in [submission.student, submission, *notebooks,
                                     *(g for nb in notebooks for g in nb.grades),
                                     *(c for nb in notebooks for c in nb.comments)]]


def autograde_error(log: str) -> str:
    """One line saying why nbgrader's autograde of a notebook failed, from its log: the exception under a traceback
    nbgrader logged, else its first error message."""
    records = [r for r in re.split(r"^(?=\[[A-Z]+\] )", log, flags=re.M) if r.startswith("[ERROR] ")]
    for record in records:
        if "Traceback (most recent call last)" in record:
            return record.strip().splitlines()[-1].strip()[:200]
    if records:
        return " ".join(records[0][len("[ERROR] "):].split())[:200]
    return "nbgrader could not autograde the notebook (see its log)"


def cell_failures(autograded: dict[str, bytes]) -> dict[str, str]:
    """grade_id -> reason, for cells in which the kernel had to be restarted (course/autograde.py)."""
    import nbformat

    found = {}
    for name, data in autograded.items():
        if name.endswith(".ipynb"):
            for cell in nbformat.reads(data.decode("utf-8"), as_version=4).cells:
                grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error" and output.get("ename") in GRADING_ERRORS and grade_id:
                        found[grade_id] = output.get("evalue", output["ename"])[:200]
    return found


class Grader:
    """A private course directory and its own gradebook copy, grading one student at a time: nbgrader's autograde
    here, the regrade in a regrade process (``Regrade``) started beside it."""

    def __init__(self, context: dict):
        sys.path[:0] = [str(Path(context["repo"]) / "instructor"), context["repo"]]
        import regrade  # instructor/regrade.py
        from nbgrader.apps import NbGraderAPI

        self.regrade = regrade
        self.assignment = context["assignment"]
        self.root = Path(tempfile.mkdtemp(prefix="grading-"))
        (self.root / "nbgrader_config.py").write_text(context["config"], encoding="utf-8")
        write_tree(self.root / "source" / self.assignment, context["source"])
        (self.root / "gradebook.db").write_bytes(context["gradebook"])
        # started first: it sets up its pristine copy while nbgrader loads (the course library it imports here is
        # the one on disk, as for `nbgrader autograde`; the regrade's is the commit's)
        self.regrader = Regrade({**context, "source": str(self.root / "source" / self.assignment),
                                 "hidden": [str(self.root)]})
        config = nbgrader_config(self.root)
        self.api = NbGraderAPI(config=config)
        self.db_url = self.api.coursedir.db_url

    def grade(self, job: dict) -> dict:
        student, started = job["student"], time.monotonic()
        for folder in ("submitted", "autograded"):     # the previous student's
            shutil.rmtree(self.root / folder, ignore_errors=True)
        submitted = self.root / "submitted" / student / self.assignment
        write_tree(submitted, job["files"])
        result = self.api.autograde(self.assignment, student, force=True, create=True)
        autograded = read_tree(self.root / "autograded" / student / self.assignment)
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.db_url) as gb:      # a submission autograde never reached is still accounted for
            try:
                gb.find_submission(self.assignment, student)
            except MissingEntry:
                gb.update_or_create_student(student)
                gb.add_submission(self.assignment, student)
        regraded = self.regrader.grade(student, submitted,
                                       self.regrade.gradebook_scores(self.root, self.assignment))
        if "failed" in regraded:
            return {"student": student, "failed": regraded["failed"]}
        return {"student": student,
                "autograded": autograded,
                "records": submission_records(self.db_url, self.assignment, student),
                **regraded,
                "autograde_error": "" if result["success"] else autograde_error(result.get("log", "")),
                "cell_failures": cell_failures(autograded),
                "seconds": time.monotonic() - started}

    def close(self) -> None:
        self.regrader.close()
        shutil.rmtree(self.root, ignore_errors=True)


class Regrade:
    """The regrade process of a grading process: ``regrade.regrader`` set up once, then one student per request.
    A process of its own because it imports the course library from the pristine copy, while nbgrader's autograde
    imports it from the repository (course/autograde.py jails the kernels around the repository's course/)."""

    def __init__(self, context: dict):
        self.proc = subprocess.Popen([sys.executable, str(HERE), "--regrade"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        send(self.proc.stdin, {k: context[k] for k in ("repo", "course", "assignment", "source", "hidden")})
        self.ready: dict | None = None

    def grade(self, student: str, folder: Path, nbgrader: dict) -> dict:
        """``{"rows", "pristine", "installation"}`` (``regrade.Report``'s, as plain data), or ``{"failed":
        reason}`` when the regrade could not be set up (the commit's own files) or its process died."""
        if self.ready is None:
            self.ready = receive(self.proc.stdout) or {"failed": "the regrade process died as it started"}
        if "failed" in self.ready:
            return self.ready
        try:
            send(self.proc.stdin, {"student": student, "folder": str(folder), "nbgrader": nbgrader})
            answer = receive(self.proc.stdout)
        except OSError:
            answer = None
        return {**self.ready, **answer} if answer is not None else {"failed": "the regrade process died"}

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()


def serve_regrade() -> None:
    """The regrade process: a context, then students until its stdin closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    context = receive(inp)
    sys.path.insert(0, str(Path(context["repo"]) / "instructor"))
    import regrade  # instructor/regrade.py

    with contextlib.ExitStack() as stack:
        try:
            r = stack.enter_context(regrade.regrader(Path(context["course"]), context["assignment"],
                                                     Path(context["repo"]), Path(context["source"]),
                                                     tuple(context["hidden"])))
        except Exception as e:  # noqa: BLE001  (the commit's own files: every student's reason, one line)
            send(out, {"failed": f"the regrade could not start: {e}".splitlines()[0][:300]})
            return
        send(out, {"pristine": {"commit": r.pristine.commit, "differences": r.pristine.differences},
                   "installation": r.installation})
        while (request := receive(inp)) is not None:
            rows = r.grade(request["student"], Path(request["folder"]), request["nbgrader"])
            send(out, {"rows": [asdict(row) for row in rows]})


def serve() -> None:
    """The grading process: a context, then jobs until its stdin closes."""
    out = os.fdopen(os.dup(1), "wb")     # the messages; whatever else writes to stdout goes to the log
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    grader = Grader(receive(inp))
    try:
        send(out, {"ready": True})
        while (job := receive(inp)) is not None:
            send(out, grader.grade(job))
    finally:
        grader.close()


# ---- the handle ---------------------------------------------------------------------------------------------------

class WorkerFailed(Exception):
    """The grading process died or ran past its limit (the reason is the message)."""


class Worker:
    """A grading process seen from the process that sends it jobs: started on the first job, restarted after one
    that killed it or ran past its limit.  Its temporary files (its course directory, the judge's) live in a
    directory of the handle's, removed however the process ends.  ``kill`` may come from another thread."""

    def __init__(self, context: dict, log=subprocess.DEVNULL):
        self.context, self.log = context, log
        self.proc: subprocess.Popen | None = None
        self.scratch: str | None = None
        self.closed = False
        self.lock = threading.Lock()

    def grade(self, job: dict, timeout: float) -> dict:
        """The job's result, or ``{"student", "failed": reason}`` when the process died or ``timeout`` s passed
        (it is killed)."""
        deadline = time.monotonic() + timeout
        try:
            proc = self.proc or self._start(deadline, timeout)
            send(proc.stdin, job)
            answer = self._answer(proc, deadline, timeout, "grading")
            if "failed" in answer:   # its regrade process is gone: the next job gets a fresh grading process
                self.kill()
            return answer
        except (OSError, ValueError, WorkerFailed) as e:   # ValueError: a pipe closed by kill()
            self.kill()
            return {"student": job["student"],
                    "failed": str(e) if isinstance(e, WorkerFailed) else f"the grading process died ({e})"}

    def _start(self, deadline: float, limit: float) -> subprocess.Popen:
        with self.lock:
            if self.closed:
                raise WorkerFailed("grading was stopped")
            self.scratch = tempfile.mkdtemp(prefix="grading-")
            self.proc = proc = subprocess.Popen(
                [sys.executable, str(Path(self.context["repo"]) / "instructor" / HERE.name)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                env={**os.environ, "TMPDIR": self.scratch},
                start_new_session=True)   # Ctrl-C in a terminal goes to grade.py alone
        send(proc.stdin, self.context)
        self._answer(proc, deadline, limit, "starting")
        return proc

    @staticmethod
    def _answer(proc: subprocess.Popen, deadline: float, limit: float, doing: str):
        ready, _, _ = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise WorkerFailed(f"grading ran past its time limit ({limit:g} s)")
        answer = receive(proc.stdout)
        if answer is None:
            code = proc.wait()
            raise WorkerFailed(f"the grading process died while {doing} "
                               f"({'signal ' + str(-code) if code < 0 else 'exit status ' + str(code)})")
        return answer

    def kill(self, close: bool = False) -> None:
        """Kill the grading process and everything it started (kernels, gloo workers, judges); remove its files.
        ``close``: and start no other one."""
        with self.lock:
            self.closed = self.closed or close
            proc, self.proc, scratch, self.scratch = self.proc, None, self.scratch, None
        if proc is not None:
            try:
                victims = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
            except psutil.Error:
                victims = []
            for p in victims:
                try:
                    p.kill()
                except psutil.Error:
                    pass
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)

    def close(self) -> None:
        """Let the grading process finish (it removes its course directory), or kill it after 10 s."""
        proc = self.proc
        if proc is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill(close=True)


# ---- Dask ---------------------------------------------------------------------------------------------------------

_WORKERS: dict[tuple[int, str], Worker] = {}   # a Dask worker's grading processes: one per thread and context
_LOCK = threading.Lock()


def on_dask(job: dict, context: dict, timeout: float) -> dict:
    """A job run as a Dask task: on this Dask worker's grading process for the calling thread and this context."""
    key = (threading.get_ident(), context["digest"])
    with _LOCK:
        worker = _WORKERS.setdefault(key, Worker(context))
    return worker.grade(job, timeout)


def stop_dask_workers(kill: bool = False) -> int:
    """Close (or ``kill``) every grading process of this Dask worker; ``Client.run`` calls it at the end."""
    with _LOCK:
        workers = list(_WORKERS.values())
        _WORKERS.clear()
    for worker in workers:
        worker.kill(close=True) if kill else worker.close()
    return len(workers)


if __name__ == "__main__":
    serve_regrade() if sys.argv[1:] == ["--regrade"] else serve()
