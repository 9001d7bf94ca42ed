"""The nbgrader sources in instructor/source are generated from the exercises and kept up to date."""

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"


def load_generator():
    spec = importlib.util.spec_from_file_location("instructor_generate", INSTRUCTOR / "generate.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = load_generator()
EXERCISES = generate.read_exercises(ROOT / "practice" / "problems", ROOT / "solutions")
NOTEBOOKS = sorted((INSTRUCTOR / "source").glob("ch*/ch*.ipynb"))


def test_committed_sources_are_up_to_date():
    result = subprocess.run([sys.executable, str(INSTRUCTOR / "generate.py"), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_reports_what_is_stale_and_generate_repairs_it(tmp_path):
    out = tmp_path / "source"
    assert generate.main(["--out", str(out)]) == 0
    notebook = next(out.glob("ch*/ch*.ipynb"))
    notebook.write_text(notebook.read_text(encoding="utf-8").replace("load_submission(", "load_submission ("),
                        encoding="utf-8")
    (out / "ch99").mkdir()
    (out / "ch99" / "old.ipynb").write_text("{}", encoding="utf-8")
    (out / "ch01" / ".ipynb_checkpoints").mkdir()   # Jupyter's, not ours
    (out / "ch01" / ".ipynb_checkpoints" / "ch01-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    files = generate.render(ROOT / "practice" / "problems", ROOT / "solutions")
    assert generate.stale(files, out) == sorted([notebook.relative_to(out).as_posix(), "ch99/old.ipynb"])
    assert generate.main(["--check", "--out", str(out)]) == 1
    assert generate.main(["--out", str(out)]) == 0
    assert generate.stale(files, out) == [] and not (out / "ch99").exists()


def test_a_modified_test_file_is_refused_with_one_line(tmp_path, capsys):
    problems = tmp_path / "problems"
    shutil.copytree(ROOT / "practice" / "problems", problems)
    test_file = next(problems.glob("*/test_public.py"))
    test_file.write_text(test_file.read_text(encoding="utf-8") + "\nassert True\n", encoding="utf-8")
    assert generate.main(["--problems", str(problems), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("generate: ") and str(test_file) in err and err.count("\n") == 1


def test_one_assignment_per_chapter_with_exercises_and_language():
    chapters = sorted({e.chapter for e in EXERCISES})
    assert [p.parent.name for p in NOTEBOOKS] == [f"ch{n:02d}{s}" for n in chapters for s in ("", "-en")]
    assert all(p.stem == p.parent.name for p in NOTEBOOKS)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.parent.name.endswith("-en")], ids=lambda p: p.parent.name)
def test_the_english_assignment_is_the_chinese_one_in_english(path):
    english = nbformat.read(path, as_version=4)
    chinese = nbformat.read(path.parent.parent / path.stem[:-3] / f"{path.stem[:-3]}.ipynb", as_version=4)
    assert [c.metadata for c in english.cells] == [c.metadata for c in chinese.cells]   # ids, points, limits
    for en, zh in zip(english.cells, chinese.cells):
        meta = en.metadata.nbgrader
        if meta["grade"] or meta["solution"]:   # the same solutions and tests (their messages come in both)
            assert en.source == zh.source
        else:                                   # the prose and the setup cell: English only
            assert not re.search(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]", en.source), en.source
    setup = {lang: next(c.source for c in nb.cells if c.metadata.nbgrader["grade_id"] == "setup")
             for lang, nb in (("en", english), ("zh", chinese))}
    for lang, source in setup.items():   # the language is set before the checks are imported
        assert source.index(f"course.i18n.set_language({lang!r})") < source.index("import course.checks")
    assert "points" in english.cells[0].source and "分" in chinese.cells[0].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.parent.name)
def test_notebook_is_valid_nbgrader_source(path):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    MetadataValidator().validate_nb(nb)  # raises on invalid nbgrader metadata
    meta = [c.metadata.nbgrader for c in nb.cells]
    assert all(m["schema_version"] == 3 for m in meta)
    ids = [m["grade_id"] for m in meta]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")

    chapter = int(path.parent.name[2:4])   # ch02, ch02-en
    exercises = [e for e in EXERCISES if e.chapter == chapter]
    graded = {m["grade_id"]: m["points"] for m in meta if m["grade"]}
    assert graded == {f"{e.grade_id}_tests": e.points for e in exercises}
    for e in exercises:
        solution = next(c for c in nb.cells if c.metadata.nbgrader["grade_id"] == e.grade_id)
        tests = next(c for c in nb.cells if c.metadata.nbgrader["grade_id"] == f"{e.grade_id}_tests")
        assert solution.metadata.nbgrader["solution"] and "### BEGIN SOLUTION" in solution.source
        # the judge's test files, verbatim, each test called; the hidden ones inside nbgrader's markers
        public, hidden = tests.source.split("### BEGIN HIDDEN TESTS\n")
        hidden, after = hidden.split("### END HIDDEN TESTS\n")
        public_tests, hidden_tests = (generate.tests_source(e, f"test_{k}.py") for k in ("public", "hidden"))
        assert public_tests in public and hidden_tests in hidden
        body = ast.parse(tests.source).body
        assert ast.unparse(body[0]) == f"tests = load_submission({', '.join(map(repr, generate.submission_names(e)))})"
        run = [n.value.args[0].id for n in body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
               and ast.unparse(n.value.func) == "tests.run"]
        assert run == generate.test_names(public_tests) + generate.test_names(hidden_tests)   # each test counted
        # kept in the students' copy, after the hidden tests: the tamper check, then the points earned
        assert after == f"course_untouched()\ntests.points({e.points:g})"
        assert tests.metadata["timeout"] >= 2 * e.timeout


def test_config_gives_each_test_cell_its_exercise_time_limit():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(INSTRUCTOR)).load_config()
    assert config.CourseDirectory.course_id == "pipeline-parallelism"
    assert "raise NotImplementedError()" in config.ClearSolutions.code_stub["python"]
    timeout = config.Execute.timeout_func
    limits = {}
    for path in NOTEBOOKS:
        for c in nbformat.read(path, as_version=4).cells:
            limits[c.metadata.nbgrader["grade_id"]] = timeout(c)
    for e in EXERCISES:
        assert limits[f"{e.grade_id}_tests"] == 2 * e.timeout + 30
        assert limits[e.grade_id] == config.Execute.timeout == 60  # solution cells: definitions only
    assert limits["live_1f1b_tests"] >= 2 * 60  # the live exercise: gloo jobs, minutes not seconds
    assert timeout(nbformat.v4.new_code_cell("", metadata={"timeout": "soon"})) == 60
    assert timeout(nbformat.v4.new_code_cell("", metadata={"timeout": 10**6})) == 600


def test_a_cell_past_its_time_limit_is_interrupted_and_the_next_cell_runs():
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(INSTRUCTOR)).load_config()
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import time\ntime.sleep(120)", metadata={"timeout": 3}),
        nbformat.v4.new_code_cell("print('next')"),
    ])
    start = time.monotonic()
    Execute(config=config).preprocess(nb, {"metadata": {"path": str(INSTRUCTOR)}})
    assert time.monotonic() - start < 60
    assert "KeyboardInterrupt" in {o.get("ename") for o in nb.cells[0].outputs}  # scores 0 if a test cell
    assert nb.cells[1].outputs[0].text == "next\n"
