"""nbgrader plumbing for the course's assignments (used by instructor/nbgrader_config.py; runs in nbgrader, never
in a student's kernel).

- ``Execute``: nbgrader's executor, plus what to do when a cell ignores the interrupt sent at its time limit
  (e.g. it set SIGINT to SIG_IGN and loops).  nbgrader would give up on the whole notebook and score it 0; here the
  kernel is restarted, the locked setup cell is run again, the stuck cell gets an error (0 points) and execution goes
  on with the next cell, so the points earned by the other exercises stay.  Each exercise's solution and test cells
  come after its statement and need nothing from earlier exercises, so they run the same in the fresh kernel.
- ``StderrIsOutput``: nbgrader scores a test cell 0 as soon as it wrote anything to stderr; a correct answer that
  prints a warning (``warnings.warn``, ``print(..., file=sys.stderr)``, a library's own warning) keeps its points:
  stderr of grade cells is recorded as ordinary output.  A failing test still raises, which is what scores 0.
- ``JailedKernelManager``: the kernel starts inside practice/contain.py's walls (where this machine can make them):
  its own pid and mount namespaces, a read-only view of the system, the Python installation, ``course/`` and the
  notebook's directory, a private /tmp, and (as root) an unused uid.  Code in a notebook then cannot write the
  course's files, the gradebook or other students' notebooks, read ``solutions/`` or the hidden tests on disk, or
  signal nbgrader; it still shares the kernel with the tests it is graded by (see the README).
- ``prefer_own_environment``: put this interpreter's directory first on PATH, so that ``.venv/bin/nbgrader`` finds
  this environment's ``alembic`` and kernel without an activated environment.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError
from nbclient.util import run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute as NbgraderExecute
from nbgrader.preprocessors.base import NbGraderPreprocessor
from nbgrader.utils import is_grade

SETUP_CELL = "setup"   # grade_id of the locked setup cell (instructor/generate.py)
REPO = Path(__file__).resolve().parent.parent
CONTAIN = REPO / "practice" / "contain.py"
KERNEL_TMP_BYTES = 1 << 30


def prefer_own_environment() -> None:
    here = os.path.dirname(sys.executable)
    rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != here]
    os.environ["PATH"] = os.pathsep.join([here, *rest])


def stuck_error(timeout) -> NotebookNode:
    text = (f"CellTimeoutError: the cell ran past its time limit ({timeout} s) and ignored the interrupt; "
            "the kernel was restarted and grading went on with the next cell")
    return NotebookNode(output_type="error", ename="CellTimeoutError", evalue=text, traceback=[text])


class JailedKernelManager(AsyncKernelManager):
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
    """nbgrader's Execute in a jailed kernel; a cell that survives its interrupt costs its own points only (see the
    module)."""

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
    from nbgrader.converters import Autograde  # noqa: PLC0415

    steps = []
    for step in Autograde.class_traits()["autograde_preprocessors"].make_dynamic_default():
        steps += [Execute, StderrIsOutput] if step is NbgraderExecute else [step]
    return steps


class StderrIsOutput(NbGraderPreprocessor):   # enabled by default, as nbgrader's own steps
    """Record what a grade cell wrote to stderr as stdout, so that nbgrader does not score it 0 for that alone."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and is_grade(cell):
            for output in cell.outputs:
                if output.output_type == "stream" and output.name == "stderr":
                    output.name = "stdout"
        return cell, resources
