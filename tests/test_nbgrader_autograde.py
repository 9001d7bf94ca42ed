"""course/autograde.py as nbgrader_config.py wires it: a cell that ignores its interrupt or kills its kernel costs
only its own points, stderr does not zero a test cell, the kernel is jailed (practice/contain.py), the answer cells
are picked as the regrade picks them, and `.venv/bin/nbgrader` works without an activated environment."""

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from test_regrade import HONEST_VARIANTS

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


def test_a_test_cell_that_ends_with_its_points_gets_partial_credit():
    from nbgrader.utils import determine_grade

    tally = ("from course.notebook_setup import Tally\ntests = Tally()\n"
             "def test_a():\n    pass\ndef test_b():\n    assert False, 'wrong'\n")
    nb = nbformat.v4.new_notebook(cells=[
        grade_cell(tally + "tests.run(test_a, test_b)\ntests.points(5)", "half_tests"),
        grade_cell(tally + "tests.run(test_a)\ntests.points(5)", "full_tests"),
        grade_cell(tally + "tests.run(test_a)\nraise AssertionError('tampering')\ntests.points(5)", "zero_tests"),
    ])
    half, full, zero = run(nb).cells
    assert determine_grade(half) == (2.5, 5) and "test_b ... failed: AssertionError: wrong" in half.outputs[0].text
    assert determine_grade(full) == (5, 5)
    assert determine_grade(zero) == (0, 5)   # an error (course_untouched's) still scores 0


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


def source_cells(assignment: str, *grade_ids: str):
    nb = nbformat.read(INSTRUCTOR / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    return [by_id[g] for g in grade_ids]


@pytest.mark.parametrize("variant", sorted(HONEST_VARIANTS))
def test_honest_variants_score_full_marks_in_the_kernel(variant):
    """The answers tests/test_regrade.py regrades, through nbgrader's executor: the same full marks."""
    from nbgrader.utils import determine_grade

    solution, before = HONEST_VARIANTS[variant]
    setup, tests = source_cells("ch01", "setup", "bubble_ratio_tests")
    nb = nbformat.v4.new_notebook(cells=[setup, *(nbformat.v4.new_code_cell(s) for s in before),
                                         nbformat.v4.new_code_cell(solution), tests])
    nb = run(nb)
    assert determine_grade(nb.cells[-1]) == (15, 15), nb.cells[-1].outputs


def test_graded_code_cannot_write_the_course_read_the_solutions_or_signal_nbgrader(tmp_path):
    """In the jailed kernel (practice/contain.py, where namespaces can be made): every file outside /tmp is
    read-only, solutions/ and the hidden tests are not there, and this process (nbgrader's) cannot be signalled."""
    from nbgrader.utils import determine_grade

    from practice import contain

    course_file, solution = ROOT / "course" / "sim.py", ROOT / "solutions" / "bubble-ratio.py"
    before = course_file.read_bytes()
    probe = f"""\
import errno, os, signal, time
time.sleep(2.5)   # long enough for ipykernel's parent poller to look (its parent here is the jail's init)
for path in ({str(course_file)!r}, {str(INSTRUCTOR / 'poisoned.py')!r}, {str(tmp_path / 'outside')!r}):
    try:
        open(path, "a").close()
        raise AssertionError(f"wrote {{path}}")
    except OSError as e:
        assert e.errno in (errno.EROFS, errno.ENOENT, errno.EACCES), e
for path in ({str(solution)!r}, {str(ROOT / 'practice' / 'problems' / 'bubble-ratio' / 'test_hidden.py')!r}):
    assert not os.path.exists(path), path
try:
    os.kill({os.getpid()}, signal.SIGSTOP)   # nbgrader's process, if it were visible (that pid in here: not ours)
    raise AssertionError("signalled nbgrader")
except (ProcessLookupError, PermissionError):
    pass
assert os.getpid() == 2 and os.listdir("/tmp")    # a pid namespace of its own, and its /tmp
_ = open("/tmp/scratch", "w").write("fine")    # its own /tmp is writable
"""
    nb = run(nbformat.v4.new_notebook(cells=[grade_cell(probe, "probe_tests")]))
    if contain.mode():
        assert determine_grade(nb.cells[0]) == (5, 5), nb.cells[0].outputs
    else:   # no namespace here: the kernel ran unconfined, and the probe says so by failing
        assert determine_grade(nb.cells[0]) == (0, 5)
    assert course_file.read_bytes() == before and not (INSTRUCTOR / "poisoned.py").exists()
    assert not (tmp_path / "outside").exists()
