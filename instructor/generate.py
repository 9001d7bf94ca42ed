"""Generate the nbgrader assignments from the exercises: one assignment per chapter and language.

    python instructor/generate.py           # rewrite instructor/source/ch01/ch01.ipynb ... ch08, ch01-en ... ch08-en
    python instructor/generate.py --check   # exit 1 when instructor/source is out of date

Each chapter is two assignments with the same cells, ids and points: ``chNN`` in Chinese and ``chNN-en`` in English
(the statement, the instructions, and, since the setup cell sets the language, every message of the checks).

Each exercise is `practice/problems/<slug>/` (problem.md, test_public.py, test_hidden.py) plus
`solutions/<slug>.py`; the local judge reads the same files, so nbgrader and the judge run the same tests.
A chapter notebook opens with a locked setup cell (it sets the assignment's language, imports the modules named in
`requires` and `course.checks` before any learner code runs, and gets `load_submission` and `course_untouched` from
`course.notebook_setup`); then
each exercise becomes three cells:

- the statement (markdown, locked);
- the solution cell: `solutions/<slug>.py` as is (its `### BEGIN SOLUTION` blocks become the code stub on release);
- the test cell (locked, worth the exercise's points): `tests = load_submission(...)`, which turns the solution
  cell into the module `submission` the tests import, then test_public.py with `tests.run(...)` of each test, then
  test_hidden.py with its runs between `### BEGIN HIDDEN TESTS` / `### END HIDDEN TESTS` (stripped on release,
  restored on autograde), and last `tests.points(POINTS)`: the points earned by the judge's rule
  (`course.scoring`: points x passed / tests), which nbgrader records as the cell's partial credit.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(__file__).resolve().parent / "source"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}

INTRO = {"zh": """\
# 第 {chapter} 章练习 (chapter {chapter} exercises)

本 notebook 共 {count} 道题，满分 {points} 分。每道题：

1. 读题，在**解答单元格**里把 `raise NotImplementedError()` 换成你的代码，运行它；
2. 运行它下面的**测试单元格**：没有报错就说明公开测试 (public tests) 通过了。

测试把解答单元格的代码当作模块 `submission` 导入 (import)：用到的函数、import 都要写在这个单元格里，
别的单元格里定义的东西测试看不到。先运行最上面的准备单元格 (setup)。

测试单元格逐个运行测试，最后一行显示得分：每个测试分值相同，得分 = 满分 × 通过的测试数 / 测试总数
(partial credit, the same rule as the local judge)。评分时 (nbgrader autograde) 测试单元格会被恢复成原样，
并加上隐藏测试 (hidden tests)，所以这里显示的只是公开测试 (public tests) 的得分。
请不要改动测试单元格，也不要删除任何单元格。
本地自测也可以用 `python practice/judge.py test <slug>`（题目 slug 写在每道题的标题下）。""", "en": """\
# Chapter {chapter} exercises

This notebook holds {count} exercises worth {points} points in all. For each one:

1. read the statement, replace `raise NotImplementedError()` in the **solution cell** with your code and run it;
2. run the **test cell** below it: when it reports no failure, the public tests pass.

The tests import the solution cell's code as the module `submission`: every function and import it uses must be in
that cell; what other cells define, the tests do not see. Run the setup cell at the top first.

The test cell runs the tests one by one and shows the score on its last line: every test is worth the same, the score
is the points times the tests passed over the tests (partial credit, the same rule as the local judge). When it is
graded (nbgrader autograde) the test cell is restored as it was and the hidden tests are added, so the score shown
here is that of the public tests only. Please do not change the test cells, and do not delete any cell.
You can also check your work locally with `python practice/judge.py --lang en test <slug>` (each exercise's slug is
under its title)."""}

ASSIGNMENT_SUFFIX = {"zh": "", "en": "-en"}   # ch02 (Chinese), ch02-en (English)

# The setup cell runs first and is locked (nbgrader restores it on autograde). As in the judge, the checks are
# imported before any learner code (they capture genuine primitives: math.isclose, ...); course.notebook_setup
# records the course library, so a test cell whose answer changed it fails, and turns solution cells into the module
# the tests import (a real file, so a spawned worker process can import it).
SETUP = """\
# {title}
import course.i18n
course.i18n.set_language({lang!r})   # the checks' messages in this assignment's language
{imports}import course.checks
import course.notebook_setup

load_submission, course_untouched = course.notebook_setup.prepare(globals())"""


sys.path.insert(0, str(ROOT))   # the repository, so that the exercise catalogue imports as `practice.exercises`
from course.files import write_file  # noqa: E402
from course.i18n import LANGS, set_language, tr  # noqa: E402
from practice.exercises import JudgeError, Problem, load_problems, test_names  # noqa: E402


def read_exercises(problems_dir: Path, solutions_dir: Path) -> list[Problem]:
    """Every exercise, by chapter then slug, with its test files read (and checked against problems/SHA256SUMS)."""
    exercises = load_problems(problems_dir, solutions_dir)
    for e in exercises:
        e.tests   # noqa: B018  (read and verified now: a modified test file stops the generation here)
    return exercises


def solution_source(exercise: Problem) -> str:
    return exercise.solution.read_text(encoding="utf-8").strip()


def tests_source(exercise: Problem, name: str) -> str:
    return exercise.tests[name].source.strip()


def submission_names(exercise: Problem) -> list[str]:
    """The names the tests import from `submission` (else the solution's public top-level definitions)."""
    names = []
    for test_file in ("test_public.py", "test_hidden.py"):
        names += [name for name in exercise.tests[test_file].submission_names if name not in names]
    if not names:
        names = [node.name for node in ast.parse(solution_source(exercise)).body
                 if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")]
    return names


def with_runs(source: str) -> str:
    """The test file's source, then each of its tests run and counted by the cell's tally."""
    return source + "\n\n\n" + "\n".join(f"tests.run({name})" for name in test_names(source))


def cell(kind: str, source: str, grade_id: str, *, solution=False, grade=False, locked=False, points=None,
         timeout=None) -> nbformat.NotebookNode:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}
    if grade:
        meta["points"] = points
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    node = new(source, id=grade_id, metadata={"nbgrader": meta})
    if timeout is not None:
        # read by Execute.timeout_func in nbgrader_config.py
        node.metadata["timeout"] = timeout
    return node


def chapter_notebook(chapter: int, exercises: list[Problem], lang: str = "zh") -> nbformat.NotebookNode:
    """The chapter's assignment in ``lang``."""
    set_language(lang)
    total = sum(e.points for e in exercises)
    requires = {r for e in exercises for r in e.requires}
    setup = SETUP.format(title=tr("准备：先运行这个单元格 (setup: run this cell first)", "setup: run this cell first"),
                         lang=lang, imports="".join(f"import {r}\n" for r in sorted(requires)))
    cells = [
        cell("markdown", INTRO[lang].format(chapter=chapter, count=len(exercises), points=f"{total:g}"), "intro",
             locked=True),
        cell("code", setup, "setup", locked=True),
    ]
    for e in exercises:
        needs = tr(f"；需要 {', '.join(e.requires)}", f"; needs {', '.join(e.requires)}") if e.requires else ""
        title = tr(f"## {e.title}（{e.points:g} 分）", f"## {e.title} ({e.points:g} points)")
        statement = f"{title}\n\n`{e.slug}` · {e.header}{needs}\n\n{e.statement.strip()}"
        names = ", ".join(repr(name) for name in submission_names(e))
        tests = (f"tests = load_submission({names})\n\n" + with_runs(tests_source(e, "test_public.py"))
                 + "\n\n### BEGIN HIDDEN TESTS\n" + with_runs(tests_source(e, "test_hidden.py"))
                 + f"\n### END HIDDEN TESTS\ncourse_untouched()\ntests.points({e.points:g})")
        cells += [
            cell("markdown", statement, f"{e.grade_id}_statement", locked=True),
            cell("code", solution_source(e), e.grade_id, solution=True),
            # public + hidden files each get the judge's time limit, plus a margin for the kernel
            cell("code", tests, f"{e.grade_id}_tests", grade=True, locked=True, points=e.points,
                 timeout=int(2 * e.timeout + 30)),
        ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    nbformat.validate(nb)
    return nb


def assignment_name(chapter: int, lang: str) -> str:
    return f"ch{chapter:02d}{ASSIGNMENT_SUFFIX[lang]}"


def render(problems_dir: Path, solutions_dir: Path) -> dict[str, str]:
    """Relative path under source/ -> notebook text, for every chapter that has exercises and every language."""
    chapters: dict[int, list[Problem]] = {}
    for exercise in read_exercises(problems_dir, solutions_dir):
        chapters.setdefault(exercise.chapter, []).append(exercise)
    try:
        return {f"{assignment_name(n, lang)}/{assignment_name(n, lang)}.ipynb":
                nbformat.writes(chapter_notebook(n, chapters[n], lang)) + "\n"
                for n in sorted(chapters) for lang in LANGS}
    finally:
        set_language(None)


def stale(files: dict[str, str], out: Path) -> list[str]:
    """Paths under `out` that differ from `files`: missing, changed or left over (hidden files such as Jupyter's
    .ipynb_checkpoints are not ours and are ignored)."""
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*")
               if p.is_file() and not any(part.startswith(".") for part in p.relative_to(out).parts)}
    return sorted(path for path in on_disk | set(files)
                  if path not in files or path not in on_disk
                  or (out / path).read_text(encoding="utf-8") != files[path])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the sources are out of date; write nothing")
    parser.add_argument("--problems", type=Path, default=ROOT / "practice" / "problems")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    parser.add_argument("--out", type=Path, default=SOURCE, help="default: instructor/source")
    args = parser.parse_args(argv)
    try:   # each notebook is written in its own language, whatever the locale of whoever generates them
        files = render(args.problems, args.solutions)
    except (JudgeError, ValueError, OSError) as e:
        print(f"generate: {e}", file=sys.stderr)
        return 2
    if not files:
        parser.error(f"no exercises found in {args.problems}")
    changed = stale(files, args.out)
    if args.check:
        for path in changed:
            print(f"out of date: {args.out / path}")
        if changed:
            print("run: python instructor/generate.py")
        return 1 if changed else 0
    for path in changed:
        target = args.out / path
        if path in files:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_file(target, files[path])
        else:  # a notebook of an exercise or chapter that is gone
            target.unlink()
            if not any(target.parent.iterdir()):
                target.parent.rmdir()
    print(f"{len(changed)} of {len(files)} notebooks updated in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
