"""course/notebook_setup.py: the helpers the locked setup cell of every assignment gets (run here without a kernel:
each cell is executed in one namespace and recorded as IPython's input history would)."""

import os
import subprocess
import sys

import pytest

import course.checks
from course import notebook_setup


@pytest.fixture
def notebook(monkeypatch):
    """A fake notebook namespace; run(source) executes one cell in it; prepare() is the setup cell's call."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    namespace = {"__name__": "__main__"}
    cells = []

    def run(source):
        cells.append(source)
        exec(compile(source, f"<cell-{len(cells)}>", "exec"), namespace)

    run.prepare = lambda: notebook_setup.prepare(namespace, history=lambda: list(cells))
    yield run
    sys.modules.pop("submission", None)


def test_the_cells_that_define_the_names_become_the_module_submission(notebook):
    load_submission, _ = notebook.prepare()
    notebook("import math\n\ndef area(r):\n    return math.pi * r * r\n")
    notebook("unrelated = 1\n")
    notebook("class Shape:\n    def sides(self):\n        return 4\n")
    load_submission("area", "Shape")
    import submission

    assert submission.area(1.0) == pytest.approx(3.14159, rel=1e-5) and submission.Shape().sides() == 4
    assert not hasattr(submission, "unrelated")
    # a worker process finds it too (PYTHONPATH)
    out = subprocess.run([sys.executable, "-c", "import submission; print(submission.area(2.0))"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and float(out.stdout) == pytest.approx(12.566, rel=1e-3), out.stderr


def test_a_redefinition_replaces_the_earlier_cell(notebook):
    load_submission, _ = notebook.prepare()
    notebook("def f():\n    return 1\n")
    load_submission("f")
    import submission
    assert submission.f() == 1
    first = sys.path[0]
    notebook("def f():\n    return 2\n")
    load_submission("f")
    import submission  # a fresh module
    assert submission.f() == 2
    assert first not in sys.path and first not in os.environ["PYTHONPATH"]   # the old directory left the paths
    assert not os.path.exists(first)                                       # and the disk


def test_a_missing_name_says_to_run_the_solution_cell(notebook):
    load_submission, _ = notebook.prepare()
    with pytest.raises(NameError, match="run the solution cell"):
        load_submission("nowhere")


def test_patching_the_checks_is_reported(notebook, monkeypatch):
    _, course_untouched = notebook.prepare()
    course_untouched()
    monkeypatch.setattr(course.checks, "assert_equal", lambda *a, **k: None)
    with pytest.raises(AssertionError, match=r"tampering.*course\.checks\.assert_equal"):
        course_untouched()


def test_a_test_cell_scores_test_by_test_with_the_judges_rule(notebook, capsys):
    from course.scoring import partial_points

    load_submission, _ = notebook.prepare()
    notebook("def double(x):\n    return 2 * x if x < 10 else 0\n")
    tests = load_submission("double")

    def test_small():
        from submission import double
        assert double(2) == 4

    def test_large():
        from submission import double
        assert double(20) == 40, "double(20) should be 40"

    def test_exit():
        raise SystemExit(3)       # the judge calls this "crashed": a failed test, not a stopped cell

    tests.run(test_small, test_large)
    tests.run(test_exit)
    assert tests.points(15) == partial_points(15, 1, 3) == 5.0
    out = capsys.readouterr().out
    assert "test_small ... passed" in out and "test_large ... failed: AssertionError: double(20) should be 40" in out
    assert "1 passed, 2 failed: 5/15" in out

    def interrupted():
        raise KeyboardInterrupt   # the cell's time limit: the cell stops, as nbgrader expects

    with pytest.raises(KeyboardInterrupt):
        tests.run(interrupted)
