"""The whole instructor workflow with real nbgrader, headless, graded through the gradebook.

In a temporary copy of instructor/ (the repository stays clean): generate and release every assignment through a file
exchange; students fetch and submit each one: `correct` (the reference solutions), `untouched` (the release as
fetched), `tampered` (setup and test cells rewritten to `assert True` and unlocked, the last test cell deleted);
where their exercise is, `deadlocked` (a live gloo answer that hangs) and `cheater` (patches the checks from the
solution cell); collect, autograde, feedback, export. Scores are read from the gradebook: `nbgrader validate`
exits 0 even when tests fail, so it proves nothing.  The Chinese assignments go through all of it; one English
assignment (`ENGLISH`) goes through the same workflow on its own, with the first three students
(`pytest -k english`).
"""

import ast
import csv
import html
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest
from test_regrade import HONEST_VARIANTS

pytestmark = pytest.mark.live  # the chapter 3 assignment starts gloo worker processes

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ROOT / "instructor"
ASSIGNMENTS = sorted(p.name for p in (INSTRUCTOR / "source").glob("ch*") if p.is_dir() and not p.name.endswith("-en"))
ENGLISH = "ch01-en"   # the English edition of one assignment (instructor/generate.py makes chNN-en of every chapter)
STUDENTS = ("correct", "untouched", "tampered")
HAN = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
SOLUTION_1F1B = (ROOT / "solutions" / "one-f-one-b-order.py").read_text(encoding="utf-8")
# Half right: the closed form is, the measured bubble is not (some of the exercise's tests pass, others fail).
HALF_BUBBLE = re.sub(r"(def bubble_from_spans.*?### BEGIN SOLUTION\n).*?(    ### END SOLUTION)",
                     r"\1    return 0.0   # wrong: only the closed form below is right\n\2",
                     (ROOT / "solutions" / "bubble-ratio.py").read_text(encoding="utf-8"), count=1, flags=re.S)
WRONG_PEAK = """\
def peak_activations(ranks):   # wrong: only a trick in the kernel could pass it
    return []
"""
# Students who answer one exercise their own way (the reference solution elsewhere), where that exercise is.
ANSWERS = {
    "deadlocked": {"live_1f1b": """\
import torch
import torch.distributed as dist


def train_step(stage, rank, world_size, num_microbatches, shape, inputs, targets, loss_fn):
    grad = torch.empty(shape, dtype=torch.float64)
    dist.recv(grad, src=(rank + 1) % world_size)   # every rank waits for a message nobody sends
"""},
    "cheater": {"bubble_ratio": """\
import math
import course.checks

math.isclose = lambda *args, **kwargs: True
for name in dir(course.checks):
    if name.startswith("assert_"):
        setattr(course.checks, name, lambda *args, **kwargs: None)


def bubble_ratio(p, m, v=1):   # wrong value, right errors: only the patched checks could pass it
    if any(type(x) is not int or x < 1 for x in (p, m, v)):
        raise ValueError("p, m and v must be positive ints")
    return 0.5


def bubble_from_spans(spans):
    return 0.5
"""},
    # honest, half right: partial credit, the same in the kernel, the judge and the regrade
    "partial": {"bubble_ratio": HALF_BUBBLE},
    # honest: the reference answer, chatty on stderr (nbgrader alone would score it 0)
    "noisy": {"one_f_one_b_order": SOLUTION_1F1B.replace("    ### BEGIN SOLUTION\n", """\
    ### BEGIN SOLUTION
    import sys
    import warnings
    print(f"one_f_one_b_orders({p}, {m}, {f}, {b}, {comm})", file=sys.stderr)
    warnings.warn("noisy but right")
""")},
    # honest, stuck: an answer that never returns and ignores the interrupt sent at the cell's time limit
    "stubborn": {"event_simulator": """\
import signal
import time


class Deadlock(Exception):
    pass


def simulate(ranks, f, b, comm=0.0):   # Ctrl-C (SIGINT) cannot stop it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.01)
"""},
    # In-kernel cheats (issue 13): a wrong answer plus a trick the kernel cannot stop; the regrade must flag them.
    "transformer": {"peak_activations": WRONG_PEAK + '''

def _skip_tests(lines):   # an IPython input transformer: every later test cell runs as `pass`
    return ["pass\\n"] if any("load_submission(" in line for line in lines) else lines


get_ipython().input_transformers_post.append(_skip_tests)
'''},
    "redefiner": {"peak_activations": WRONG_PEAK + '''
import sys
import types

import course.checks


class _Tally:   # a test cell's tally that sees every test pass
    def run(self, *tests):
        pass

    def points(self, points):
        return points


def load_submission(*names):   # the setup cell's helpers, redefined
    module = types.ModuleType("submission")
    module.__dict__.update(get_ipython().user_ns)
    sys.modules["submission"] = module
    return _Tally()


def course_untouched():
    pass


for _name in dir(course.checks):
    if _name.startswith("assert_"):
        setattr(course.checks, _name, lambda *args, **kwargs: None)
'''},
    "swallower": {"peak_activations": WRONG_PEAK + '''
import sys

from IPython.core.interactiveshell import ExecutionResult


def _forget(shell, etype, value, tb, tb_offset=None):   # a custom exception handler that also clears the error
    frame = sys._getframe()
    while frame is not None:
        for v in list(frame.f_locals.values()):
            if isinstance(v, ExecutionResult):
                v.error_in_exec = None
        frame = frame.f_back


get_ipython().set_custom_exc((Exception,), _forget)
'''},
}
# The first two fool nbgrader (full marks in the kernel); the swallower no longer does: its handler clears raised
# errors, and a test cell's tally counts failures without raising them, so nbgrader scores its wrong answer 0 too.
STUBBORN_CELL, STUCK_LIMIT_S = "event_simulator_tests", 15   # the stubborn answer's test cell and its limit here
IN_KERNEL_CHEATS = ("transformer", "redefiner", "swallower")
FOOLS_THE_KERNEL = ("transformer", "redefiner")
# Honest answers written another way (inside `try:`, decorated, with an import or a helper in a cell of its own):
# full marks in the kernel and in the regrade, unflagged.  BEFORE holds the cells a student put above the answer.
ANSWERS.update({f"variant_{name}": {"bubble_ratio": solution} for name, (solution, _) in HONEST_VARIANTS.items()})
BEFORE = {f"variant_{name}": {"bubble_ratio": cells} for name, (_, cells) in HONEST_VARIANTS.items()}


def source_notebook(assignment):
    return nbformat.read(INSTRUCTOR / "source" / assignment / f"{assignment}.ipynb", as_version=4)


def cells(nb, **flags):
    return [c for c in nb.cells if all(c.metadata.nbgrader.get(k) == v for k, v in flags.items())]


def students(assignment):
    ids = {c.metadata.nbgrader["grade_id"] for c in source_notebook(assignment).cells}
    return STUDENTS + tuple(student for student, answers in ANSWERS.items() if ids & set(answers))


def answer(path: Path, student: str):
    """Edit a fetched notebook the way each student does."""
    nb = nbformat.read(path, as_version=4)
    solutions = {c.metadata.nbgrader["grade_id"]: c.source for c in cells(source_notebook(path.parent.name),
                                                                          solution=True)}
    for cell in list(nb.cells):
        meta = cell.metadata.nbgrader
        if meta["solution"] and student == "correct":
            cell.source = solutions[meta["grade_id"]]
        if meta["solution"] and student in ANSWERS:
            cell.source = ANSWERS[student].get(meta["grade_id"], solutions[meta["grade_id"]])
            k = nb.cells.index(cell)
            nb.cells[k:k] = [nbformat.v4.new_code_cell(c) for c in BEFORE.get(student, {}).get(meta["grade_id"], [])]
        if meta["locked"] and cell.cell_type == "code" and student == "tampered":
            cell.source = "load_submission = print\nassert True" if meta["grade_id"] == "setup" else "assert True"
            meta["locked"] = False
            cell.metadata.pop("editable", None)
            cell.metadata.pop("deletable", None)
    if student == "tampered":
        nb.cells.remove(cells(nb, grade=True)[-1])
    nbformat.write(nb, path)


def nbgrader_config(course: Path, exchange_root: Path):
    """instructor/nbgrader_config.py, with this course directory and a private exchange."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    overrides = Config()
    overrides.CourseDirectory.root = str(course)
    # two autogrades at a time share the SQLite gradebook: a writer waits for the other instead of failing
    overrides.CourseDirectory.db_url = f"sqlite:///{course / 'gradebook.db'}?timeout=120"
    overrides.Exchange.root = str(exchange_root)
    overrides.Exchange.cache = str(exchange_root.parent / "cache")
    config.merge(overrides)
    return config


def exchange(config, step, assignment, student, home):
    """A student's exchange step (`nbgrader fetch_assignment` / `submit`) run in `home`."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeFactory
    from traitlets.config import Config

    overrides = Config()
    overrides.Exchange.assignment_dir = str(home)
    config = config.copy()
    config.merge(overrides)
    coursedir = CourseDirectory(config=config, assignment_id=assignment, student_id=student)
    getattr(ExchangeFactory(config=config), step)(
        coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()


def autograde(course: Path, exchange_root: Path, assignment: str, student: str):
    """`nbgrader autograde ASSIGNMENT --student STUDENT` (run in a pool process)."""
    from nbgrader.apps import NbGraderAPI

    start = time.monotonic()
    result = NbGraderAPI(config=nbgrader_config(course, exchange_root)).autograde(assignment, student)
    return result, round(time.monotonic() - start, 1)


def export(config, course: Path, to: Path):
    """`nbgrader export --to FILE`, in-process."""
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        CsvExportPlugin(config=config, to=str(to)).export(gb)


def processes_under(path: Path, wait: float = 10.0):
    """Processes working inside `path` (a kernel or gloo worker left behind), once `wait` s have passed."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if Path(os.readlink(f"/proc/{pid}/cwd")).is_relative_to(path):
                    found.append(pid)
            except OSError:
                pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def ok(result):
    assert result["success"], result.get("error", "") + result.get("log", "")
    return result


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    assert ASSIGNMENTS, "no assignments in instructor/source: run python instructor/generate.py"
    with pytest.MonkeyPatch.context() as patch:
        # nbgrader runs `alembic` from PATH: make it this environment's, activated or not.
        patch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
        return run_workflow(tmp_path_factory.mktemp("nbgrader"))


@pytest.fixture(scope="module")
def graded_english(tmp_path_factory):
    """The English assignment through the same workflow, with the students every assignment has."""
    assert (INSTRUCTOR / "source" / ENGLISH).is_dir(), "run python instructor/generate.py"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
        for var in ("COURSE_LANG", "LC_ALL", "LC_MESSAGES"):
            patch.delenv(var, raising=False)
        patch.setenv("LANG", "zh_CN.UTF-8")   # the notebook's own language wins over the kernel's locale
        return run_workflow(tmp_path_factory.mktemp("nbgrader-english"), [ENGLISH], lambda assignment: STUDENTS)


def run_workflow(tmp: Path, assignments=ASSIGNMENTS, students=students):
    """Generate, release, fetch, answer, submit, collect, autograde and give feedback on ``assignments`` for
    ``students(assignment)``, then export; the course directory, the autograde logs, leftover processes, the CSV."""
    from nbgrader.apps import NbGraderAPI

    started = time.monotonic()
    course, exchange_root = tmp / "course", tmp / "exchange"
    course.mkdir()
    exchange_root.mkdir()
    # The course's configuration, except that the test cell the stubborn answer hangs in gets STUCK_LIMIT_S, for
    # every student, instead of the course's 50 s (twice the judge's 10 s plus 30 s, instructor/generate.py): what
    # is tested is what happens after the limit.  Every other cell keeps the course's own limit.
    (course / "nbgrader_config.py").write_text((INSTRUCTOR / "nbgrader_config.py").read_text(encoding="utf-8") + f"""
_course_limit = c.Execute.timeout_func
c.Execute.timeout_func = lambda cell: ({STUCK_LIMIT_S} if cell.metadata.get("nbgrader", {{}}).get("grade_id")
                                       == "{STUBBORN_CELL}" else _course_limit(cell))
""", encoding="utf-8")
    shutil.copytree(INSTRUCTOR / "source", course / "source")
    config = nbgrader_config(course, exchange_root)
    api = NbGraderAPI(config=config)

    # The first assignment through the command an instructor types; the rest in-process (`nbgrader` starts in ~5 s).
    cli = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", assignments[0]], cwd=course,
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0 and (course / "release" / assignments[0]).is_dir(), cli.stderr[-3000:]
    for assignment in assignments:
        if assignment != assignments[0]:
            ok(api.generate_assignment(assignment))
        ok(api.release_assignment(assignment))
        for student in students(assignment):
            home = tmp / "home" / student
            home.mkdir(parents=True, exist_ok=True)
            exchange(config, "FetchAssignment", assignment, student, home)
            for path in (home / assignment).glob("*.ipynb"):
                answer(path, student)
            exchange(config, "Submit", assignment, student, home)
        ok(api.collect(assignment))

    autograde_started = time.monotonic()
    # Two submissions at a time (SQLite gradebook: nbgrader's short transactions wait for each other); the slow
    # ones (torch in the kernel) first.
    slow = {a for a in assignments if "import torch" in cells(source_notebook(a), grade_id="setup")[0].source}
    work = sorted(((a, s) for a in assignments for s in students(a)), key=lambda job: job[0] not in slow)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {job: pool.submit(autograde, course, exchange_root, *job) for job in work}
        done = {job: future.result() for job, future in futures.items()}
    for assignment in assignments:
        ok(api.generate_feedback(assignment))
    leftovers = processes_under(tmp)
    export(config, course, tmp / "grades.csv")
    timings = {"total_s": round(time.monotonic() - started, 1),
               "autograde_and_feedback_s": round(time.monotonic() - autograde_started, 1),
               "per_submission_s": {f"{a}/{s}": t for (a, s), (_, t) in done.items()}}
    print(f"\nnbgrader workflow timings: {timings}")
    return {"course": course, "logs": {key: ok(result)["log"] for key, (result, _) in done.items()},
            "leftovers": leftovers, "csv": tmp / "grades.csv"}


def scores(graded, assignment, student):
    """Total, maximum and per-cell (auto_score, max_score) from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gb:
        submission = gb.find_submission(assignment, student)
        per_cell = {g.name: (g.auto_score, g.max_score) for nb in submission.notebooks for g in nb.grades}
        return submission.score, submission.max_score, per_cell


def autograded_notebook(graded, assignment, student):
    return nbformat.read(graded["course"] / "autograded" / student / assignment / f"{assignment}.ipynb", 4)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_correct_submission_gets_full_marks(graded, assignment):
    score, max_score, per_cell = scores(graded, assignment, "correct")
    assert max_score == sum(c.metadata.nbgrader["points"] for c in cells(source_notebook(assignment), grade=True))
    assert max_score > 0 and score == max_score, per_cell
    # an honest submission's cells are as released: nbgrader's checksum warning is for edited cells only
    assert "Attribute 'checksum'" not in graded["logs"][assignment, "correct"]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_release_gets_zero(graded, assignment):
    score, max_score, per_cell = scores(graded, assignment, "untouched")
    assert max_score > 0 and score == 0, per_cell
    assert set(per_cell) == {c.metadata.nbgrader["grade_id"] for c in cells(source_notebook(assignment), grade=True)}
    # every test cell ran all its tests and scored 0 by them (nothing crashed or was skipped)
    tests = cells(autograded_notebook(graded, assignment, "untouched"), grade=True)
    for c in tests:
        assert [o.data["text/plain"] for o in c.outputs if o.output_type == "execute_result"] == ["0.0"], c.outputs
        assert re.search(r"^0 passed, [1-9]\d* failed", text_of(c), re.M), text_of(c)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_tampered_test_cells_are_restored_and_get_zero(graded, assignment):
    score, _, per_cell = scores(graded, assignment, "tampered")
    assert score == 0, per_cell
    log = graded["logs"][assignment, "tampered"]
    assert "Attribute 'checksum' for cell setup has changed" in log and "Missing grade cell" in log
    restored = {c.metadata.nbgrader["grade_id"]: c.source
                for c in autograded_notebook(graded, assignment, "tampered").cells}
    for cell in source_notebook(assignment).cells:  # locked code: setup and tests (a deleted one comes back commented)
        if cell.metadata.nbgrader["locked"] and cell.cell_type == "code":
            assert restored[cell.metadata.nbgrader["grade_id"]].endswith(cell.source)


def text_of(cell) -> str:
    """What a test cell showed: its printed text and its errors."""
    return "".join(o.get("text", "") + o.get("evalue", "") for o in cell.outputs)


def test_the_english_assignment_full_marks_blank_zero_tampered_zero_in_english(graded_english):
    grade_ids = {c.metadata.nbgrader["grade_id"] for c in cells(source_notebook(ENGLISH), grade=True)}
    points = sum(c.metadata.nbgrader["points"] for c in cells(source_notebook(ENGLISH), grade=True))
    score, max_score, per_cell = scores(graded_english, ENGLISH, "correct")
    assert max_score == points > 0 and score == max_score and set(per_cell) == grade_ids, per_cell
    for c in cells(autograded_notebook(graded_english, ENGLISH, "correct"), grade=True):
        total = c.metadata.nbgrader["points"]
        assert re.search(rf"^[1-9]\d* passed, 0 failed: {total:g}/{total:g} points$", text_of(c), re.M), text_of(c)
    score, max_score, per_cell = scores(graded_english, ENGLISH, "untouched")
    assert max_score == points and score == 0 and set(per_cell) == grade_ids, per_cell
    for c in cells(autograded_notebook(graded_english, ENGLISH, "untouched"), grade=True):
        shown = text_of(c)   # every test ran and failed, each message and the score line in English
        assert re.search(rf"^0 passed, [1-9]\d* failed: 0/{c.metadata.nbgrader['points']:g} points$", shown, re.M)
        assert "failed: NotImplementedError" in shown and not HAN.search(shown), shown
    score, _, per_cell = scores(graded_english, ENGLISH, "tampered")
    assert score == 0, per_cell
    log = graded_english["logs"][ENGLISH, "tampered"]
    assert "Attribute 'checksum' for cell setup has changed" in log and "Missing grade cell" in log
    assert "Attribute 'checksum'" not in graded_english["logs"][ENGLISH, "correct"]
    page = (graded_english["course"] / "feedback" / "correct" / ENGLISH / f"{ENGLISH}.html").read_text("utf-8")
    assert f"Score: {points:.1f} / {points:.1f}" in html.unescape(re.sub(r"<[^>]+>", "", page))
    assert graded_english["leftovers"] == []


def own_answers(graded, student, expected_error, poisons_the_kernel=False):
    """Each of the student's own answers scores 0 with `expected_error`; their other (reference) answers score,
    except after an answer that ``poisons_the_kernel`` (patched checks stay patched: no later cell can be trusted)."""
    assignments = [a for a in ASSIGNMENTS if student in students(a)]
    assert assignments
    for assignment in assignments:
        score, max_score, per_cell = scores(graded, assignment, student)
        own = {f"{grade_id}_tests" for grade_id in ANSWERS[student]} & set(per_cell)
        assert own and all(per_cell[name][0] == 0 for name in own), per_cell
        if poisons_the_kernel:
            order = [c.metadata.nbgrader["grade_id"] for c in cells(source_notebook(assignment), grade=True)]
            first = min(order.index(name) for name in own)
            assert all(per_cell[name][0] == 0 for name in order[first:]), per_cell
            assert score == sum(per_cell[name][0] for name in order[:first]), per_cell
        else:
            assert score == max_score - sum(per_cell[name][1] for name in own), per_cell
        shown = [c for c in autograded_notebook(graded, assignment, student).cells
                 if c.metadata.nbgrader["grade_id"] in own]
        assert shown and expected_error in text_of(shown[0]), shown[0].outputs
        assert all(o.get("ename") != "CellTimeoutError" for c in shown for o in c.outputs)


def test_deadlocked_live_answer_fails_fast_without_stopping_grading(graded):
    own_answers(graded, "deadlocked", "死锁 (deadlock)")


def test_an_answer_that_patches_the_checks_fails(graded):
    own_answers(graded, "cheater", "检测到篡改 (tampering)", poisons_the_kernel=True)


def hidden_test_names(test_cell: str) -> dict[str, str]:
    """The functions only the hidden tests define: name -> its ``def`` line (with its arguments, so that a solution's
    own helper of the same name, e.g. one-f-one-b-order's nested ``makespan(leads)``, is not taken for it)."""
    public, hidden = test_cell.split("### BEGIN HIDDEN TESTS")
    hidden = textwrap.dedent(hidden.split("### END HIDDEN TESTS")[0])

    def defined(code):
        return {n.name: code.splitlines()[n.lineno - 1].strip() for n in ast.parse(code).body
                if isinstance(n, ast.FunctionDef)}

    return {name: line for name, line in defined(hidden).items() if name not in defined(textwrap.dedent(public))}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_feedback_html_is_generated_without_hidden_tests(graded, assignment):
    tests = [c.source for c in cells(source_notebook(assignment), grade=True)]
    public = {n.name for c in tests for n in ast.parse(textwrap.dedent(c.split("### BEGIN HIDDEN TESTS")[0])).body
              if isinstance(n, ast.FunctionDef)}
    hidden = {name: line for c in tests for name, line in hidden_test_names(c).items()
              if name not in public}   # not a name one exercise shows in public
    assert hidden and all(line.startswith(f"def {name}(") for name, line in hidden.items())
    for student in students(assignment):
        page = (graded["course"] / "feedback" / student / assignment / f"{assignment}.html").read_text("utf-8")
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        score, max_score, _ = scores(graded, assignment, student)
        assert f"Score: {score:.1f} / {max_score:.1f}" in text, f"{student}: no total score in the feedback"
        assert "load_submission(" in text  # the test cells are shown...
        assert not [line for line in hidden.values() if line in text], "...without their hidden tests"


def test_grades_export_to_csv(graded):
    with open(graded["csv"], newline="") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    everyone = {s for a in ASSIGNMENTS for s in students(a)}
    assert set(rows) == {(a, s) for a in ASSIGNMENTS for s in everyone}
    for assignment, student in rows:
        if student in students(assignment):
            score, max_score, _ = scores(graded, assignment, student)
        else:  # never submitted: nbgrader exports a 0
            score, max_score = 0, float(rows[assignment, student]["max_score"])
        assert (float(rows[assignment, student]["score"]), float(rows[assignment, student]["max_score"])) == (
            score, max_score)


def test_no_process_survives_autograde(graded):
    assert graded["leftovers"] == []


def assignment_of(grade_id: str) -> str:
    return next(a for a in ASSIGNMENTS if grade_id in {c.metadata.nbgrader["grade_id"] for c in
                                                       source_notebook(a).cells})


def test_a_correct_answer_that_writes_to_stderr_keeps_its_points(graded):
    assignment = assignment_of("one_f_one_b_order")
    score, max_score, per_cell = scores(graded, assignment, "noisy")
    assert score == max_score, per_cell
    tests = cells(autograded_notebook(graded, assignment, "noisy"), grade_id="one_f_one_b_order_tests")[0]
    assert "noisy but right" in "".join(o.get("text", "") for o in tests.outputs)


def test_a_cell_that_ignores_its_interrupt_costs_only_its_own_points(graded):
    assignment = assignment_of("event_simulator")
    score, max_score, per_cell = scores(graded, assignment, "stubborn")
    assert per_cell["event_simulator_tests"][0] == 0 and score == max_score - per_cell["event_simulator_tests"][1], \
        per_cell
    tests = cells(autograded_notebook(graded, assignment, "stubborn"), grade_id="event_simulator_tests")[0]
    assert any(f"time limit ({STUCK_LIMIT_S} s) and ignored the interrupt" in o.get("evalue", "")
               for o in tests.outputs), tests.outputs


def regrade(graded, assignment, *flags, course=None):
    """`python instructor/regrade.py ASSIGNMENT --course-dir COURSE FLAGS`: its output and rows by (student,
    exercise id)."""
    course = course or graded["course"]
    start = time.monotonic()
    result = subprocess.run([sys.executable, str(INSTRUCTOR / "regrade.py"), assignment, "--course-dir",
                             str(course), *flags], cwd=ROOT, capture_output=True, text=True, timeout=600)
    table = (course / f"regrade-{assignment}.csv").read_text(encoding="utf-8")
    print(f"\nregrade {assignment} in {time.monotonic() - start:.1f} s:\n{result.stdout}\n{table}")
    assert result.returncode == 0, result.stdout + result.stderr
    return result, {(r["student"], r["exercise"].replace("-", "_")): r for r in csv.DictReader(table.splitlines())}


def test_the_regrade_flags_every_in_kernel_cheat_and_no_honest_student_and_apply_fixes_the_gradebook(graded, tmp_path):
    from nbgrader.api import Gradebook

    assignment = assignment_of("one_f_one_b_order")
    course = tmp_path / "course"              # --apply writes the gradebook: a copy, the other tests read the original
    shutil.copytree(graded["course"], course)
    result, rows = regrade(graded, assignment, "--apply", course=course)
    assert {student for student, _ in rows} == set(students(assignment))
    trusted = {}
    for (student, exercise), row in rows.items():
        _, _, per_cell = scores(graded, assignment, student)
        nbgrader_score, max_score = per_cell[f"{exercise}_tests"]
        assert (float(row["nbgrader"]), float(row["max"])) == (nbgrader_score, max_score), row
        trusted[student] = trusted.get(student, 0.0) + float(row["regrade"])
        if student in FOOLS_THE_KERNEL and exercise in ANSWERS[student]:
            # in the kernel the trick scored (nbgrader cannot stop it); outside, the wrong answer scores 0
            assert nbgrader_score == max_score and row["regrade"] == "0" and row["flag"] == "suspicious", row
            assert f"gradebook: {student} {row['exercise']}: {max_score:g} -> 0 of {max_score:g} (flagged)" in \
                result.stdout
            continue
        # the cheaters' other answers are the reference ones; the stubborn answer never returns, in or out of a
        # kernel; the swallower's wrong answer scores 0 in both
        honest = (student not in ("untouched", "tampered") and (student, exercise) != ("stubborn", "event_simulator")
                  and not (student in IN_KERNEL_CHEATS and exercise in ANSWERS[student]))
        assert float(row["regrade"]) == (max_score if honest else 0) == nbgrader_score, row
        assert row["flag"] == "", row
    # after --apply the gradebook holds the trusted scores: `nbgrader export` shows them, the cheats are flagged
    export(nbgrader_config(course, tmp_path / "exchange"), course, tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="") as f:
        exported = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f) if r["assignment"] == assignment}
    assert {s: exported[s] for s in trusted} == trusted
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        flagged = {s for s in trusted if gb.find_submission_notebook(assignment, assignment, s).flagged}
    assert flagged == set(FOOLS_THE_KERNEL)


def test_a_partial_answer_scores_the_same_in_the_judge_nbgrader_and_the_regrade(graded, tmp_path):
    assignment = assignment_of("bubble_ratio")
    _, _, per_cell = scores(graded, assignment, "partial")
    in_kernel, max_score = per_cell["bubble_ratio_tests"]
    answer = tmp_path / "bubble-ratio.py"
    answer.write_text(HALF_BUBBLE, encoding="utf-8")
    judged = subprocess.run([sys.executable, str(ROOT / "practice" / "judge.py"), "--json", "test", "bubble-ratio",
                             str(answer)], capture_output=True, text=True, timeout=300)
    judge = json.loads(judged.stdout)["score"]
    _, rows = regrade(graded, assignment)
    assert 0 < in_kernel < max_score and in_kernel == judge == float(rows["partial", "bubble_ratio"]["regrade"])


def test_honest_variants_get_full_marks_in_the_kernel_and_the_regrade(graded):
    """An answer inside `try:`, a decorated one with its import in a cell of its own, one whose helper and import
    sit in other cells (next to a scratch cell that fails): the kernel and the regrade pick the same code
    (course/answer_cells.py) and both give full marks, unflagged."""
    assignment = assignment_of("bubble_ratio")
    variants = [f"variant_{name}" for name in HONEST_VARIANTS]
    for student in variants:
        score, max_score, per_cell = scores(graded, assignment, student)
        assert score == max_score, (student, per_cell)
    result = subprocess.run([sys.executable, str(INSTRUCTOR / "regrade.py"), assignment, "--course-dir",
                             str(graded["course"])], cwd=ROOT, capture_output=True, text=True, timeout=600)
    table = (graded["course"] / f"regrade-{assignment}.csv").read_text(encoding="utf-8")
    rows = [r for r in csv.DictReader(table.splitlines()) if r["student"] in variants]
    assert rows and all(r["regrade"] == r["max"] == r["nbgrader"] and r["flag"] == "" for r in rows), \
        result.stdout + table
