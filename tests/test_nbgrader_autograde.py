"""course/autograde.py as nbgrader_config.py wires it: a cell that ignores its interrupt or kills its kernel costs
only its own points, stderr does not zero a test cell, and `.venv/bin/nbgrader` works without an activated
environment."""

import subprocess
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"


def config():
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(INSTRUCTOR)).load_config()


def grade_cell(source, grade_id, **meta):
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": True, "grade_id": grade_id, "locked": True, "points": 5, "schema_version": 3, "solution": False,
        "task": False}, **meta})


def run(nb):
    """The autograde executor and the stderr step, configured by instructor/nbgrader_config.py."""
    from course import autograde

    cfg = config()
    preprocessors = cfg.Autograde.autograde_preprocessors
    assert preprocessors[:2] == [autograde.Execute, autograde.StderrIsOutput]
    for cls in preprocessors[:2]:   # called as nbgrader's exporter calls them (a disabled step does nothing)
        nb, _ = cls(config=cfg)(nb, {"metadata": {"path": str(INSTRUCTOR)}})
    return nb


def test_a_cell_that_ignores_its_interrupt_costs_only_its_own_points():
    from nbgrader.utils import determine_grade

    setup = nbformat.v4.new_code_cell("BASE = 41", metadata={"nbgrader": {"grade_id": "setup", "locked": True,
                                                                          "solution": False, "grade": False}})
    stuck = grade_cell("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n"
                       "    time.sleep(0.01)", "stuck_tests", timeout=2)
    later = grade_cell("assert BASE + 1 == 42\nprint('ran')", "later_tests")
    nb = nbformat.v4.new_notebook(cells=[setup, stuck, later])
    start = time.monotonic()
    nb = run(nb)
    seconds = time.monotonic() - start
    assert seconds < 60, seconds
    assert determine_grade(nb.cells[1]) == (0, 5)
    assert "ignored the interrupt" in nb.cells[1].outputs[-1].evalue
    # the fresh kernel ran the setup cell again, then the next cell, which keeps its points
    assert determine_grade(nb.cells[2]) == (5, 5) and nb.cells[2].outputs[0].text == "ran\n", nb.cells[2].outputs
    print(f"stuck cell handled in {seconds:.1f} s")


def test_a_cell_that_kills_its_kernel_costs_only_its_own_points():
    from nbgrader.utils import determine_grade

    setup = nbformat.v4.new_code_cell("BASE = 41", metadata={"nbgrader": {"grade_id": "setup", "locked": True,
                                                                          "solution": False, "grade": False}})
    dying = grade_cell("import os\nos._exit(3)", "dying_tests")
    later = grade_cell("assert BASE + 1 == 42\nprint('ran')", "later_tests")
    nb = run(nbformat.v4.new_notebook(cells=[setup, dying, later]))
    assert determine_grade(nb.cells[1]) == (0, 5)
    assert nb.cells[1].outputs[-1].ename == "DeadKernelError", nb.cells[1].outputs
    assert determine_grade(nb.cells[2]) == (5, 5) and nb.cells[2].outputs[0].text == "ran\n", nb.cells[2].outputs


def test_a_correct_answer_that_writes_to_stderr_or_warns_keeps_its_points():
    from nbgrader.utils import determine_grade

    nb = nbformat.v4.new_notebook(cells=[
        grade_cell("import sys, warnings\nprint('note', file=sys.stderr)\nwarnings.warn('careful')\nassert True",
                   "noisy_tests"),
        grade_cell("import warnings\nwarnings.warn('careful')\nassert 1 == 2", "wrong_tests"),
    ])
    nb = run(nb)
    noisy, wrong = nb.cells
    assert "careful" in "".join(o.get("text", "") for o in noisy.outputs)
    assert determine_grade(noisy) == (5, 5), noisy.outputs
    assert determine_grade(wrong) == (0, 5)   # a failing test still raises


def test_the_venv_nbgrader_works_without_an_activated_environment(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text((INSTRUCTOR / "nbgrader_config.py").read_text())
    (course / "source" / "tiny").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[grade_cell("assert True", "tiny_tests")])
    nbformat.write(nb, course / "source" / "tiny" / "tiny.ipynb")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    nbgrader = Path(sys.executable).parent / "nbgrader"
    result = subprocess.run([str(nbgrader), "generate_assignment", "tiny"], cwd=course, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert (course / "release" / "tiny" / "tiny.ipynb").is_file() and (course / "gradebook.db").is_file()
