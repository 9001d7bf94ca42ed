"""instructor/regrade.py: the out-of-kernel regrade of a class, on a small course built here (chapter 1's
bubble-ratio), with a gradebook written through nbgrader's API.  The regrade runs from a git repository made here
from the working tree (it grades from the commit, so the code under test must be committed there).  The whole
class through real nbgrader (honest, blank, tampered and in-kernel-cheating students) is in
tests/test_nbgrader_workflow.py."""

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from course.answer_cells import Cells

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"
SOLUTION = (ROOT / "solutions" / "bubble-ratio.py").read_text(encoding="utf-8")
WRONG = "def bubble_ratio(p, m, v=1):\n    return 0.5\n\n\ndef bubble_from_spans(spans):\n    return 0.5\n"
POINTS = "15"   # bubble-ratio's points (practice/problems/bubble-ratio/problem.md)
# Honest answers written differently: each must score full marks, unflagged, in the regrade and in the kernel
# (tests/test_nbgrader_autograde.py runs the same cells through nbgrader's executor).  (answer cell, cells before it)
CHECK = """    for name, value in (("p", p), ("m", m), ("v", v)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
"""
HONEST_VARIANTS = {
    "in_try": ("try:\n" + "".join("    " + line if line.strip() else line for line in SOLUTION.splitlines(True))
               + "except ImportError:\n    pass\n", []),
    "decorated": (SOLUTION.replace("def bubble_ratio(", "@functools.lru_cache(maxsize=None, typed=True)\n"
                                                        "def bubble_ratio("), ["import functools\n"]),
    "helper_cell": (SOLUTION.replace("import math\n", "").replace(CHECK, "    positive_ints(p=p, m=m, v=v)\n"),
                    ["import math\n\n\ndef positive_ints(**values):\n    for name, value in values.items():\n"
                     "        if type(value) is not int or value < 1:\n"
                     "            raise ValueError(f'{name} must be a positive int, got {value!r}')\n",
                     "print('trying things out')\n1 / 0\n", "%time x = 1\n"]),
}
assert all(v[0] != SOLUTION for v in HONEST_VARIANTS.values()) and CHECK in SOLUTION


def source_notebook():
    return nbformat.read(INSTRUCTOR / "source" / "ch01" / "ch01.ipynb", as_version=4)


def make_repository(where: Path) -> Path:
    """A git repository holding the working tree's course/, practice/ and instructor/ (sources and scripts),
    committed: what a clean clone of this branch holds."""
    repo = where / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "workspace", "gradebook.db", "submitted", "autograded",
                                    "release", "feedback", "regrade-*.csv", "*.pyc")
    for top in ("course", "practice", "instructor", "solutions"):
        shutil.copytree(ROOT / top, repo / top, ignore=ignore)
    git = ["git", "-C", str(repo), "-c", "user.email=test@example.com", "-c", "user.name=test"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "course"], check=True)
    return repo


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    return make_repository(tmp_path_factory.mktemp("regrade-repo"))


def submit(course: Path, student: str, solution: str, extra: list[str] = (), before: list[str] = (),
           after: list[str] = ()):
    """A submitted ch01 notebook whose bubble-ratio solution cell holds `solution` (the other exercises keep the
    reference answers of the source notebook), with `before` and `after` cells around it (before its test cell)
    and `extra` cells appended at the end."""
    nb = source_notebook()
    for k, cell in enumerate(nb.cells):
        if cell.metadata.nbgrader["solution"] and cell.metadata.nbgrader["grade_id"] == "bubble_ratio":
            cell.source = solution
            nb.cells[k:k + 1] = [nbformat.v4.new_code_cell(src) for src in before] + [cell] + [
                nbformat.v4.new_code_cell(src) for src in after]
            break
    nb.cells += [nbformat.v4.new_code_cell(src) for src in extra]
    path = course / "submitted" / student / "ch01" / "ch01.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


def gradebook(course: Path, scores: dict):
    """gradebook.db with ch01 and, per student, bubble_ratio_tests' auto score (None: submitted, not autograded)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment("ch01")
        gb.add_notebook("ch01", "ch01")
        gb.add_grade_cell("bubble_ratio_tests", "ch01", "ch01", max_score=int(POINTS), cell_type="code")
        gb.add_solution_cell("bubble_ratio", "ch01", "ch01")     # where the formgrader shows comments
        for student, score in scores.items():
            gb.add_student(student)
            gb.add_submission("ch01", student)
            grade = gb.find_grade("bubble_ratio_tests", "ch01", "ch01", student)
            grade.auto_score = score
            gb.db.commit()


@pytest.fixture
def course(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])  # alembic
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    shutil.copytree(INSTRUCTOR / "source" / "ch01", course / "source" / "ch01")
    return course


def run(repository: Path, *args, tmp: Path | None = None):
    """The regrade of `repository` as an instructor runs it; asserts it printed no traceback and left no process
    and no file in its temporary directory."""
    env = dict(os.environ)
    if tmp is not None:
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(repository / "instructor" / "regrade.py"), *map(str, args)],
                            cwd=repository, capture_output=True, text=True, timeout=600, env=env)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    if tmp is not None:
        time.sleep(0.2)
        assert list(tmp.iterdir()) == [], "the regrade left files in its temporary directory"
        assert not [p for p in psutil.process_iter() if _under(p, tmp)], "the regrade left a process"
    return result, time.monotonic() - start


def _under(p: psutil.Process, path: Path) -> bool:
    try:
        return p.cwd().startswith(str(path))
    except psutil.Error:
        return False


def read_csv(path: Path, exercise: str = "bubble-ratio"):
    """The rows of one exercise, by student."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == ["student", "exercise", "nbgrader", "regrade", "max", "flag", "reason"]
    return {r["student"]: r for r in rows if r["exercise"] == exercise}


# ---- the rule that picks a learner's code (shared with load_submission in the kernel) --------------------------

def learner_cells(nb):
    locked = {c.metadata.nbgrader["grade_id"] for c in source_notebook().cells if c.metadata.nbgrader["locked"]}
    return [c.source for c in nb.cells if c.cell_type == "code"
            and c.metadata.get("nbgrader", {}).get("grade_id") not in locked]


def test_the_rule_takes_the_last_definition_and_what_it_needs():
    nb = source_notebook()
    solution = next(c for c in nb.cells if c.metadata.nbgrader["solution"])
    solution.source = WRONG
    names = ["bubble_from_spans", "bubble_ratio"]
    source, missing = Cells(learner_cells(nb)).module(names)
    assert WRONG.strip() in source and missing == []
    nb.cells.append(nbformat.v4.new_code_cell("import math\n\ndef bubble_ratio(p, m, v=1):\n    return math.e\n"))
    nb.cells.append(nbformat.v4.new_code_cell("def broken(:\n"))    # does not parse: defines nothing
    source, _ = Cells(learner_cells(nb)).module(names)
    assert "return math.e" in source and "import math" in source   # the last definition, and the import it needs
    assert "return 0.5\n\n\ndef bubble_from_spans" not in source    # the first bubble_ratio is gone
    assert Cells([WRONG, "x = undefined_name()"]).module(["nowhere"]) == ("", ["nowhere"])


@pytest.mark.parametrize("variant", sorted(HONEST_VARIANTS))
def test_honest_variants_give_a_module_that_passes_its_own_check(variant):
    """The module built for each honest variant defines what the tests import (the regrade below grades it)."""
    solution, before = HONEST_VARIANTS[variant]
    source, missing = Cells([*before, solution]).module(["bubble_from_spans", "bubble_ratio"])
    namespace = {}
    exec(compile(source, "submission", "exec"), namespace)
    assert missing == [] and namespace["bubble_ratio"](4, 8) == pytest.approx(3 / 11)


# ---- a class --------------------------------------------------------------------------------------------------

def test_a_class_is_regraded_and_an_in_kernel_score_above_it_is_flagged(repository, course, tmp_path):
    submit(course, "honest", SOLUTION)
    submit(course, "blank", "def bubble_ratio(p, m, v=1):\n    raise NotImplementedError()\n\n\n"
                            "def bubble_from_spans(spans):\n    raise NotImplementedError()\n")
    submit(course, "late_fix", WRONG, after=[SOLUTION])           # fixed in a cell of their own: honest
    submit(course, "too_late", WRONG, extra=[SOLUTION])           # fixed after the test cell: it ran too late
    submit(course, "cheat", WRONG)                                # nbgrader said 15: it was not
    submit(course, "pending", SOLUTION)                           # submitted, not autograded yet
    submit(course, "unknown", SOLUTION)                           # not in the gradebook at all
    for variant, (solution, before) in HONEST_VARIANTS.items():
        submit(course, variant, solution, before=before)
    full = int(POINTS)
    gradebook(course, {"honest": full, "blank": 0, "late_fix": full, "too_late": 0, "cheat": full, "pending": None,
                       **dict.fromkeys(HONEST_VARIANTS, full)})
    result, seconds = run(repository, "ch01", "--course-dir", course, tmp=tmp_path / "tmp")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = read_csv(course / "regrade-ch01.csv")
    got = {s: (r["exercise"], r["nbgrader"], r["regrade"], r["max"], r["flag"]) for s, r in rows.items()}
    wrong = judge_score(WRONG, tmp_path)          # the judge's partial credit for the wrong answer: same rule
    assert 0 < float(wrong) < int(POINTS)
    assert got == {
        "honest": ("bubble-ratio", POINTS, POINTS, POINTS, ""),
        "blank": ("bubble-ratio", "0", "0", POINTS, ""),
        "late_fix": ("bubble-ratio", POINTS, POINTS, POINTS, ""),
        "too_late": ("bubble-ratio", "0", wrong, POINTS, ""),
        "cheat": ("bubble-ratio", POINTS, wrong, POINTS, "suspicious"),
        "pending": ("bubble-ratio", "", POINTS, POINTS, ""),
        "unknown": ("bubble-ratio", "", POINTS, POINTS, ""),
        **{v: ("bubble-ratio", POINTS, POINTS, POINTS, "") for v in HONEST_VARIANTS},
    }, result.stdout   # a suspicious row's summary line names the tests that did not pass
    cheat = f"suspicious: cheat bubble-ratio: nbgrader {POINTS}, regrade {wrong} of {POINTS} (not passed: "
    lines = [line for line in result.stdout.splitlines() if cheat in line]
    assert len(lines) == 1 and lines[0].endswith("(failed))") and "(passed)" not in lines[0], result.stdout
    assert result.stdout.strip().endswith("1 suspicious, 0 not regraded")
    assert "from commit" in result.stdout and "not as committed" not in result.stdout
    print(f"regrade of {len(rows)} students: {seconds:.1f} s")


def judge_score(source: str, tmp: Path) -> str:
    """What `python practice/judge.py test bubble-ratio FILE --json` scores ``source``."""
    path = tmp / "answer.py"
    path.write_text(source, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "practice" / "judge.py"), "--json", "test", "bubble-ratio",
                           str(path)], capture_output=True, text=True, timeout=300)
    return f"{json.loads(proc.stdout)['score']:g}"


def test_apply_writes_the_trusted_scores_into_the_gradebook(repository, course, tmp_path):
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    submit(course, "honest", SOLUTION)
    submit(course, "cheat", WRONG)
    submit(course, "unknown", WRONG)                              # not in the gradebook: left alone
    gradebook(course, {"honest": int(POINTS), "cheat": int(POINTS)})
    result, _ = run(repository, "ch01", "--course-dir", course, "--apply")
    assert result.returncode == 0, result.stdout + result.stderr
    wrong = judge_score(WRONG, tmp_path)
    assert f"gradebook: cheat bubble-ratio: {POINTS} -> {wrong} of {POINTS} (flagged)" in result.stdout
    assert "gradebook: unknown bubble-ratio: not in the gradebook" in result.stdout
    assert "1 scores applied" in result.stdout and "1 notebooks flagged" in result.stdout
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        cheat = gb.find_grade("bubble_ratio_tests", "ch01", "ch01", "cheat")
        assert (cheat.auto_score, cheat.manual_score, cheat.score) == (int(POINTS), float(wrong), float(wrong))
        comment = gb.find_comment("bubble_ratio", "ch01", "ch01", "cheat").manual_comment
        assert comment.startswith("[regrade] Regraded outside the notebook kernel") and "regrade-ch01.csv" in comment
        assert gb.find_submission_notebook("ch01", "ch01", "cheat").flagged
        honest = gb.find_grade("bubble_ratio_tests", "ch01", "ch01", "honest")
        assert honest.manual_score is None and not gb.find_submission_notebook("ch01", "ch01", "honest").flagged
        CsvExportPlugin(to=str(course / "grades.csv")).export(gb)   # what `nbgrader export` writes
    with open(course / "grades.csv", newline="") as f:
        exported = {r["student_id"]: r["score"] for r in csv.DictReader(f)}
    assert float(exported["cheat"]) == float(wrong) and float(exported["honest"]) == int(POINTS)
    # the CSV still compares with nbgrader's own (auto) score, and a second --apply changes nothing
    again, _ = run(repository, "ch01", "--course-dir", course, "--apply")
    assert "suspicious: cheat" in again.stdout and "0 scores applied" in again.stdout, again.stdout


MALFORMED = {   # what the notebook file holds -> a word the reason must contain
    "not_json": ("{not json", "not JSON"),
    "no_cells": (json.dumps({"nbformat": 4, "metadata": {}}), "no list of cells"),
    "deep": ("[" * 100000 + "]" * 100000, "deeper"),
    "huge": (None, "MiB"),   # written below: over the size bound
}


def test_one_bad_notebook_never_stops_the_class(repository, course, tmp_path):
    """Malformed notebooks and cells, a cell too large to parse, an answer that escapes, one that tries to poison
    the library for the students after it: every student gets a row, the honest ones full marks, the broken ones
    `not regraded` with the reason, the repository stays as it was, and no traceback."""
    submit(course, "honest", SOLUTION)
    for student, (text, _) in MALFORMED.items():
        path = course / "submitted" / student / "ch01" / "ch01.ipynb"
        path.parent.mkdir(parents=True)
        if text is None:
            with open(path, "wb") as f:
                f.truncate(40 << 20)
        else:
            path.write_text(text, encoding="utf-8")
    odd = submit(course, "odd_cells", SOLUTION)   # cells nbformat would refuse: the answer in them still counts
    nb = json.loads(odd.read_text())
    nb["cells"] += [{"cell_type": "code"}, {"cell_type": "code", "source": 7}, {"cell_type": "code", "source": [1]},
                    {"cell_type": "code", "source": "x = 1", "metadata": []}, "not a cell", 3]
    odd.write_text(json.dumps(nb))
    submit(course, "giant_cell", SOLUTION, extra=["x = (" + "1 + " * 200000 + "1)\n"])   # too long to parse
    submit(course, "deep_cell", SOLUTION, extra=["x = " + "(" * 5000 + ")" * 5000 + "\n",
                                                 "y = " + "-" * 100000 + "1\n"])
    submit(course, "no_notebook", SOLUTION).unlink()
    escaper = f"""\
import os, signal, psutil
for p in psutil.process_iter():   # whatever it can see of this regrade (nothing, when contained)
    try:
        if {str(course)!r} in " ".join(p.cmdline()) and p.pid != os.getpid():
            p.send_signal(signal.SIGSTOP)
    except psutil.Error:
        pass
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.environ.clear()
        import time
        time.sleep(600)
    os._exit(0)
""" + WRONG
    submit(course, "escaper", escaper)
    library = repository / "course" / "sim.py"
    before = library.read_bytes()
    poisoner = f"""\
for path in ({str(library)!r}, {str(course / 'gradebook.db')!r}, "../../course/sim.py"):
    try:
        with open(path, "a") as f:   # what a kernel would do to every later student
            f.write("\\nraise SystemExit('poisoned')\\n")
    except OSError:
        pass
""" + WRONG
    submit(course, "poisoner", poisoner)
    result, _ = run(repository, "ch01", "--course-dir", course, tmp=tmp_path / "tmp")
    assert result.returncode == 1, result.stdout + result.stderr
    assert library.read_bytes() == before and "not as committed" not in result.stdout
    rows = read_csv(course / "regrade-ch01.csv")
    assert set(rows) == {"honest", "odd_cells", "giant_cell", "deep_cell", "no_notebook", "escaper", "poisoner",
                         *MALFORMED}
    for student in ("honest", "odd_cells", "giant_cell", "deep_cell"):
        assert (rows[student]["regrade"], rows[student]["flag"]) == (POINTS, ""), rows[student]
    wrong = judge_score(WRONG, tmp_path)      # what the wrong answer they carry earns on its own
    for student in ("escaper", "poisoner"):
        assert (rows[student]["regrade"], rows[student]["flag"]) == (wrong, ""), rows[student]
    for student, (_, word) in MALFORMED.items():
        row = rows[student]
        assert row["regrade"] == "" and row["flag"] == "not regraded" and word in row["reason"], row
        assert f"not regraded: {student} bubble-ratio:" in result.stdout
    assert rows["no_notebook"]["flag"] == "not regraded" and "no notebook" in rows["no_notebook"]["reason"]


def test_a_poisoned_installation_is_named_and_everyone_graded_from_the_commit(course, tmp_path):
    """A kernel rewrote the library the checker uses and a hidden test: the regrade names both files and grades
    with the commit's, so the honest student keeps full marks and the wrong answer still scores what it earns."""
    repository = make_repository(tmp_path)
    sim = repository / "course" / "sim.py"
    sim.write_text(sim.read_text() + "\n\ndef simulate(plan, costs=None, **kwargs):   # poisoned\n"
                                      "    raise RuntimeError('poisoned')\n")
    hidden = repository / "practice" / "problems" / "bubble-ratio" / "test_hidden.py"
    hidden.write_text("def test_anything():\n    pass\n")
    (repository / "course" / "sitecustomize.py").write_text("print('poisoned')\n")
    submit(course, "honest", SOLUTION)
    submit(course, "wrong", WRONG)
    result, _ = run(repository, "ch01", "--course-dir", course, tmp=tmp_path / "tmp")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("course/sim.py (modified)", "practice/problems/bubble-ratio/test_hidden.py (modified)",
                 "course/sitecustomize.py (added)"):
        assert f"not as committed (graded from the commit): {name}" in result.stdout, result.stdout
    rows = read_csv(course / "regrade-ch01.csv")
    assert (rows["honest"]["regrade"], rows["wrong"]["regrade"]) == (POINTS, judge_score(WRONG, tmp_path)), rows


@pytest.mark.parametrize("args, message", [
    (["ch99"], "no notebooks in"),
    (["ch01", "--course-dir", "/nonexistent"], "no such course directory"),
    (["ch01", "--workers", "0"], "--workers must be a positive integer"),
])
def test_bad_usage_is_one_line_and_exit_2(repository, course, args, message):
    if "--course-dir" not in args:
        args = [*args, "--course-dir", str(course)]
    result, _ = run(repository, *args)
    assert result.returncode == 2
    assert result.stderr.startswith("regrade: ") and message in result.stderr and result.stderr.count("\n") == 1, \
        result.stderr


def test_a_modified_installed_module_or_an_unowned_pth_file_is_named(tmp_path):
    """The installation check behind the regrade: what the checker loads from site-packages against pip's RECORD."""
    import base64
    import hashlib

    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    module = site / "pkg" / "mod.py"
    module.write_text("VALUE = 1\n")
    digest = base64.urlsafe_b64encode(hashlib.sha256(module.read_bytes()).digest()).rstrip(b"=").decode()
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text(f"pkg/mod.py,sha256={digest},10\npkg-1.0.dist-info/METADATA,,\n")
    regrade = load_regrade()
    assert regrade.unrecorded([module], [site], tmp_path / "pristine") == []
    module.write_text("VALUE = 2   # poisoned\n")
    (site / "evil.pth").write_text("import os\n")
    assert regrade.unrecorded([module], [site], tmp_path / "pristine") == [
        f"{site / 'evil.pth'} (installed by no package)", f"{module} (modified)"]


def load_regrade():
    import importlib.util

    spec = importlib.util.spec_from_file_location("instructor_regrade", INSTRUCTOR / "regrade.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_summary_gives_the_judges_reason_for_a_crash_a_timeout_or_an_error_but_not_for_a_failure():
    from practice.sandbox import Result

    verdict = load_regrade()._verdict
    crashed = Result("public", "t", "crashed", "the learner process exited or was killed\nmore detail")
    assert verdict(crashed) == "crashed: the learner process exited or was killed"
    assert verdict(Result("hidden", "t", "timeout", "killed after 10 s.")) == "timeout: killed after 10 s."
    assert verdict(Result("public", "t", "failed", "expected 3, got 4")) == "failed"
    assert verdict(Result("public", "t", "error", "")) == "error"
    # the student's own text, quoted in an error, cannot drive the instructor's terminal
    assert verdict(Result("public", "t", "error", "ValueError: \x1b[2Jgone\x07")) == "error: ValueError: ?[2Jgone?"
