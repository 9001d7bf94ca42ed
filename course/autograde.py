"""nbgrader plumbing for the course's assignments (used by instructor/nbgrader_config.py; runs in nbgrader, never
in a student's kernel).

- ``Execute``: nbgrader's executor, plus what to do when a cell ignores the interrupt sent at its time limit
  (e.g. it set SIGINT to SIG_IGN and loops) or kills its kernel (``os._exit``, a segfault, the memory limit).
  nbgrader would give up on the whole notebook and score it 0; here the kernel is restarted, the locked setup cell
  is run again, the cell gets an error (0 points) and execution goes on with the next cell, so the points earned by
  the other exercises stay.  Each exercise's solution and test cells come after its statement and need nothing
  from earlier exercises, so they run the same in the fresh kernel.
- ``StderrIsOutput``: nbgrader scores a test cell 0 as soon as it wrote anything to stderr; a correct answer that
  prints a warning (``warnings.warn``, ``print(..., file=sys.stderr)``, a library's own warning) keeps its points:
  stderr of grade cells is recorded as ordinary output.  A failing test still raises, which is what scores 0.
- ``OverwriteCells``: nbgrader's, warning "checksum has changed" only for a locked cell the student edited.  A
  test cell's checksum covers its hidden tests, which the released copy never had, so nbgrader warned for every
  submission; a cell exactly as released (its source cell without the hidden tests) gets them back quietly.
- ``ReleaseAssignment``: nbgrader's release, with the exchange folder checked first: missing and not creatable, or
  not writable, is one clear message naming the folder, the user and the two ways out.
- ``ReleaseFeedback``: nbgrader's, refusing (by name, with the reason) the submissions it cannot release to: those
  not made with ``nbgrader submit`` (``zip_collect``, hand-placed) have no ``timestamp.txt`` or
  ``submission_secret.txt``, so the student could not fetch the feedback anyway.  The others are released and
  the command then fails naming the refused ones.
- ``JailedKernelManager``: ``course.kernels``' manager (no missed reply waits out a cell's time limit); the kernel
  starts inside practice/contain.py's walls (where this machine can make them):
  its own pid and mount namespaces, a read-only view of the system, the Python installation, ``course/`` and the
  notebook's directory, a private /tmp, and (as root) an unused uid.  Code in a notebook then cannot write the
  course's files, the gradebook or other students' notebooks, read ``solutions/`` or the hidden tests on disk, or
  signal nbgrader; it still shares the kernel with the tests it is graded by (see the README).
- ``prefer_own_environment``: put this interpreter's directory first on PATH, so that ``.venv/bin/nbgrader`` finds
  this environment's ``alembic`` and kernel without an activated environment.
"""

from __future__ import annotations

import getpass
import glob
import json
import os
import sys
from pathlib import Path

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.preprocessors import (
    ClearHiddenTests,
    Execute as NbgraderExecute,
    OverwriteCells as NbgraderOverwriteCells,
)
from nbgrader.preprocessors.base import NbGraderPreprocessor
from nbgrader.utils import is_grade

from .kernels import KernelManager

SETUP_CELL = "setup"   # grade_id of the locked setup cell (instructor/generate.py)
REPO = Path(__file__).resolve().parent.parent
CONTAIN = REPO / "practice" / "contain.py"
KERNEL_TMP_BYTES = 1 << 30


def prefer_own_environment() -> None:
    here = os.path.dirname(sys.executable)
    rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != here]
    os.environ["PATH"] = os.pathsep.join([here, *rest])


def stuck_error(timeout) -> NotebookNode:
    return grading_error("CellTimeoutError", f"the cell ran past its time limit ({timeout} s) and ignored the "
                                             "interrupt")


def died_error() -> NotebookNode:
    return grading_error("DeadKernelError", "the kernel died running this cell")


def grading_error(ename: str, what: str) -> NotebookNode:
    text = f"{ename}: {what}; the kernel was restarted and grading went on with the next cell"
    return NotebookNode(output_type="error", ename=ename, evalue=text, traceback=[text])


class JailedKernelManager(KernelManager):
    """The kernel command, run through ``practice/contain.py kernel`` (which runs it unconfined, with a line on
    stderr, where no namespace can be made)."""

    def format_kernel_cmd(self, extra_arguments=None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        if not sys.platform.startswith("linux"):
            return command
        view = {"read_only": [str(REPO / "course")], "hidden": [str(REPO)], "network": True,
                "tmp_bytes": KERNEL_TMP_BYTES, "shm_bytes": KERNEL_TMP_BYTES // 4}
        return [sys.executable, "-I", str(CONTAIN), "kernel", json.dumps(view), "--", *command]


class Execute(NbgraderExecute):
    """nbgrader's Execute in a jailed kernel; a cell that survives its interrupt or kills its kernel costs its own
    points only (see the module)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", JailedKernelManager)   # nbgrader's own __init__ sets its class
        super().__init__(*args, **kwargs)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except CellTimeoutError:
            # the interrupt was sent and the kernel went on running: nothing else can run in it
            self.log.warning("Cell %s ignored its interrupt: restarting the kernel", cell_index)
            cell.outputs.append(stuck_error(self._get_timeout(cell)))
        except DeadKernelError:
            self.log.warning("Cell %s killed its kernel: restarting it", cell_index)
            cell.outputs.append(died_error())
        await self._restart_kernel()
        return cell

    execute_cell = run_sync(async_execute_cell)   # nbclient binds the sync name to its own coroutine

    async def _restart_kernel(self) -> None:
        await self.km.restart_kernel(now=True)
        await self.kc.wait_for_ready(timeout=self.startup_timeout)
        for index, other in enumerate(self.nb.cells):
            if other.get("metadata", {}).get("nbgrader", {}).get("grade_id") == SETUP_CELL:
                saved = other.outputs   # the setup cell's own outputs stay as they were
                await super().async_execute_cell(other, index, store_history=False)
                other.outputs = saved


def preprocessors() -> list:
    """nbgrader's autograde preprocessors with ``Execute`` replaced by ours and ``StderrIsOutput`` right after it."""
    steps = []
    for step in _default("autograde_preprocessors"):
        steps += [Execute, StderrIsOutput] if step is NbgraderExecute else [step]
    return steps


def sanitize_preprocessors() -> list:
    """nbgrader's sanitizing steps (before grading) with ``OverwriteCells`` replaced by ours."""
    return [OverwriteCells if step is NbgraderOverwriteCells else step for step in _default("sanitize_preprocessors")]


def _default(trait: str) -> list:
    from nbgrader.converters import Autograde

    return Autograde.class_traits()[trait].make_dynamic_default()


class OverwriteCells(NbgraderOverwriteCells):   # same name: the config's OverwriteCells section applies
    """nbgrader's OverwriteCells; "checksum has changed" only for a locked cell edited in the submission."""

    def preprocess_cell(self, cell, resources, cell_index):
        self._as_released = self._unchanged_since_release(cell)
        return super().preprocess_cell(cell, resources, cell_index)

    def _unchanged_since_release(self, cell) -> bool:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        try:
            source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id).source
        except MissingEntry:
            return False
        released = NotebookNode(source=source)
        ClearHiddenTests(parent=self)._remove_hidden_test_region(released)   # what generate_assignment released
        return cell.get("source") == released.source

    def report_change(self, name, attr, old, new):
        if attr == "checksum" and self._as_released:
            self.log.debug("Cell %s is as released: its hidden tests are put back", name)
            return
        super().report_change(name, attr, old, new)


class ReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's release_assignment, with a clear message when the exchange folder cannot be used."""

    def ensure_root(self):
        root, user = self.root, getpass.getuser()
        ways = (f"create it once, writable by everyone (sudo mkdir -p {root} && sudo chmod ugo+rwx {root}), or set "
                "NBGRADER_EXCHANGE to a folder you can write (instructor/nbgrader_config.py reads it)")
        if not os.path.isdir(root):
            parent = os.path.dirname(os.path.abspath(root))
            while not os.path.isdir(parent):
                parent = os.path.dirname(parent)
            if not os.access(parent, os.W_OK | os.X_OK):
                self.fail(f"The exchange folder {root} does not exist and user {user} cannot create it: {ways}")
        elif not os.access(root, os.W_OK | os.X_OK):
            self.fail(f"The exchange folder {root} is not writable by user {user}: {ways}")
        super().ensure_root()


class ReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release_feedback; submissions not made with `nbgrader submit` are refused by name."""

    def copy_files(self):
        refused = sorted({os.path.basename(os.path.dirname(os.path.dirname(html)))
                          for html in glob.glob(os.path.join(self.src_path, "*.html"))
                          if not all(os.path.isfile(os.path.join(os.path.dirname(html), name))
                                     for name in ("timestamp.txt", "submission_secret.txt"))})
        excluded = self.coursedir.student_id_exclude
        self.coursedir.student_id_exclude = ",".join(filter(None, [excluded, *refused]))
        try:
            super().copy_files()
        finally:
            self.coursedir.student_id_exclude = excluded
        if refused:
            self.fail(f"Feedback not released for {', '.join(refused)}: their submissions were not made with "
                      "`nbgrader submit` (no timestamp.txt or submission_secret.txt, e.g. zip_collect or copied by "
                      "hand), so they cannot fetch it; give them feedback/STUDENT/ASSIGNMENT/*.html directly. "
                      "The other students' feedback was released.")


class StderrIsOutput(NbGraderPreprocessor):   # enabled by default, as nbgrader's own steps
    """Record what a grade cell wrote to stderr as stdout, so that nbgrader does not score it 0 for that alone."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and is_grade(cell):
            for output in cell.outputs:
                if output.output_type == "stream" and output.name == "stderr":
                    output.name = "stdout"
        return cell, resources
