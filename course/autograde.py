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
- ``prefer_own_environment``: put this interpreter's directory first on PATH, so that ``.venv/bin/nbgrader`` finds
  this environment's ``alembic`` and kernel without an activated environment.
"""

from __future__ import annotations

import os
import sys

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute as NbgraderExecute
from nbgrader.preprocessors.base import NbGraderPreprocessor
from nbgrader.utils import is_grade

SETUP_CELL = "setup"   # grade_id of the locked setup cell (instructor/generate.py)


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


class Execute(NbgraderExecute):
    """nbgrader's Execute; a cell that survives its interrupt or kills its kernel costs its own points only (see
    the module)."""

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
