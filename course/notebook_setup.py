"""The helpers of an nbgrader assignment's locked setup cell (instructor/generate.py writes the cell).

    import course.checks
    import course.notebook_setup
    load_submission, course_untouched = course.notebook_setup.prepare(globals())

``prepare`` runs before any student code and records every function and class of the loaded ``course`` modules.
``load_submission(*names)`` turns the learner's cells that define ``names`` (and what those need: imports, helpers,
decorators; course/answer_cells.py holds the rule, shared with the regrade) into a fresh ``submission.py`` (on
``sys.path`` and ``PYTHONPATH``, so worker processes can import it too), which the tests import, and returns the
cell's ``Tally``; ``course_untouched()`` fails a test cell whose answer replaced something in the course library.

A test cell (instructor/generate.py writes it) scores like the judge, test by test (``course.scoring``)::

    tests = load_submission("bubble_ratio", "bubble_from_spans")
    ...                                   # the public tests' source
    tests.run(test_closed_form_examples)  # each test run and counted; a failure is printed, not raised
    ...                                   # the hidden tests, between nbgrader's markers
    course_untouched()
    tests.points(15)                      # the cell's value: the points earned, nbgrader's partial credit

This runs in the student's kernel, next to the student's code, so it proves little: a solution cell can rebind
these names or patch the checks.  The scores instructors can trust come from ``instructor/regrade.py``, which grades
the same cells outside any kernel.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import sys
import tempfile
import types

from course.answer_cells import Cells
from course.i18n import tr
from course.scoring import partial_points


def fingerprint() -> dict:
    """Every function (with its code and defaults) and class of the loaded ``course`` modules."""
    return {(name, key): (module, value) + tuple(getattr(value, a, None) for a in ("__code__", "__defaults__"))
            for name, module in list(sys.modules.items()) if name.split(".")[0] == "course" and module
            for key, value in list(vars(module).items()) if isinstance(value, (type, types.FunctionType))}


def changed(before: dict, now: dict) -> list[str]:
    """The ``module.name`` entries of ``before`` that are gone or different in ``now``."""
    return [".".join(key) for key, value in before.items()
            if key not in now or any(a is not b for a, b in zip(now[key], value))]


def executed_cells() -> list[str]:
    """The source of every cell this IPython kernel has run so far, in order (the current one last)."""
    try:
        shell = get_ipython()  # defined in an IPython kernel
    except NameError:
        raise RuntimeError("load_submission runs in a notebook kernel (IPython)") from None
    return list(shell.history_manager.input_hist_raw[1:])


class Tally:
    """The tests one test cell ran: each is run and counted, and ``points`` is the cell's score."""

    def __init__(self):
        self.passed, self.failed = 0, 0

    def run(self, *tests) -> None:
        for test in tests:
            try:
                test()
            except (Exception, SystemExit) as e:  # noqa: BLE001  (a failing test costs its own share; an interrupt stops the cell)
                self.failed += 1
                message = str(e).strip() or type(e).__name__
                print(f"{test.__name__} ... failed: {type(e).__name__}: {message}")
            else:
                self.passed += 1
                print(f"{test.__name__} ... passed")

    def points(self, points: float) -> float:
        """The points earned (``course.scoring.partial_points``); as the cell's value, nbgrader's partial credit."""
        total = self.passed + self.failed
        score = partial_points(points, self.passed, total)
        print(f"{self.passed} passed, {self.failed} failed: {score:g}/{points:g} " + tr("分 (points)", "points"))
        return score


def prepare(namespace: dict, history=executed_cells):
    """``(load_submission, course_untouched)`` for the notebook whose cells ``history()`` gives (IPython's input
    history in a kernel; ``namespace``, the notebook's globals, is what the setup cell passes)."""
    before = fingerprint()
    directories: list[str] = []

    def load_submission(*names):
        """Make the learner's cells that define ``names`` the module ``submission`` (course/answer_cells.py: the
        rule the out-of-kernel regrade uses too); a fresh Tally."""
        source, missing = Cells(history()).module(names)
        if len(missing) == len(names):
            raise NameError(tr(f"找不到 {', '.join(names)}：请先运行上面的解答单元格 (run the solution cell above "
                               "first)",
                               f"{', '.join(names)} not found: run the solution cell above first"))
        directory = tempfile.mkdtemp(prefix="submission-")
        atexit.register(shutil.rmtree, directory, True)
        with open(os.path.join(directory, "submission.py"), "w", encoding="utf-8") as file:
            file.write(source)
        sys.path[:] = [directory] + [p for p in sys.path if p not in directories]
        rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in directories]
        os.environ["PYTHONPATH"] = os.pathsep.join([directory] + rest)
        for old in directories:              # a killed kernel never runs atexit: one directory at a time
            shutil.rmtree(old, ignore_errors=True)
        directories.append(directory)
        sys.modules.pop("submission", None)
        importlib.invalidate_caches()
        return Tally()

    def course_untouched():
        """Fail when the answer replaced anything in the course library the checks use (the judge's checks run out
        of the learner's reach)."""
        gone = changed(before, fingerprint())
        if gone:
            raise AssertionError(tr(f"检测到篡改 (tampering)：提交的代码改动了检查用的函数 ({', '.join(gone[:5])})。"
                                    "请不要 monkeypatch course 库。", "tampering detected: the submission changed "
                                    f"functions the checks use ({', '.join(gone[:5])}).  Do not monkeypatch the "
                                    "course library."))

    return load_submission, course_untouched
