"""The exercise catalogue: problems, front matter, starters, checksums and what a test file declares.

One exercise is ``practice/problems/<slug>/`` (``problem.md`` with front matter, ``test_public.py``,
``test_hidden.py``, the generated ``starter.py``) plus ``solutions/<slug>.py``.  The judge (practice/judge.py) and
the nbgrader generator (instructor/generate.py) both read exercises through this module, so there is one model of
an exercise and one parser of test files.

``problems/SHA256SUMS`` holds the digest of every test file and of every file the grading trusts (the judge's own
modules, ``course/checks.py``, ``course/live_checks.py``, ``course/live/relay.py``), as paths relative to
``problems/`` (so ``sha256sum -c SHA256SUMS`` works there).  ``read_tests`` refuses to grade when one of them changed.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

PRACTICE = Path(__file__).resolve().parent
REPO = PRACTICE.parent
if str(REPO) not in sys.path:      # the judge runs as a script; course.i18n and course.twins are the repository's
    sys.path.insert(0, str(REPO))

from course import twins  # noqa: E402
from course.i18n import LANGS, language, tr  # noqa: E402

PROBLEMS = PRACTICE / "problems"
SOLUTIONS = REPO / "solutions"
TEST_FILES = ("test_public.py", "test_hidden.py")
DEFAULT_TIMEOUT = 10.0
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
KINDS = {"derive": ("推导题", "derive"), "design": ("设计题", "design"), "implement": ("实现题", "implement")}  # zh, en
# What the grading trusts besides the test files (paths from the repository root).
TRUSTED_FILES = ("practice/exercises.py", "practice/sandbox.py", "practice/checker.py", "practice/learner.py",
                 "practice/contain.py", "practice/wire.py", "practice/judge.py", "course/checks.py",
                 "course/live_checks.py", "course/live/relay.py", "course/i18n.py", "course/twins.py",
                 "course/scoring.py")


class JudgeError(Exception):
    """A problem with the judge's own inputs (unknown slug, missing file, modified tests)."""


@dataclass
class Problem:
    """One exercise.  Its title, section and statement exist in every language of ``course.i18n.LANGS``; the
    plain attributes give them in the language of the moment (``--lang`` / ``COURSE_LANG``)."""

    slug: str
    titles: dict[str, str]
    chapter: int
    points: int
    requires: list[str]
    timeout: float     # seconds per test file
    statements: twins.Twins   # the statement in both languages, with its stamps (see course/twins.py)
    dir: Path
    solution: Path
    sections: dict[str, str]   # the chapter section it practises, e.g. "Chapter 2 §4: GPipe and 1F1B"
    difficulty: int    # 1 (a warm-up) .. 3 (the hardest)
    kind: str          # "derive" (find a rule or formula), "design" (build something graded by properties), "implement"
    processes: int = 1  # processes one test case keeps busy at once (live-1f1b: 4 gloo ranks); graders count it

    @property
    def title(self) -> str:
        return self.titles[language()]

    @property
    def section(self) -> str:
        return self.sections[language()]

    @property
    def statement(self) -> str:
        return self.statements.bodies[language()] + "\n"

    @property
    def starter(self) -> Path:
        return self.dir / "starter.py"

    @property
    def grade_id(self) -> str:
        """The exercise's id in nbgrader (cell ids and grade ids cannot hold '-')."""
        return self.slug.replace("-", "_")

    @cached_property
    def tests(self) -> dict[str, TestFile]:
        """The test files, verified against SHA256SUMS, read once (see read_tests)."""
        return {name: TestFile(name, source) for name, source in read_tests(self).items()}

    def to_json(self) -> dict:
        return {"slug": self.slug, "title": self.title, "chapter": self.chapter, "section": self.section,
                "kind": self.kind, "difficulty": self.difficulty, "points": self.points, "requires": self.requires,
                "timeout": self.timeout, "processes": self.processes}

    @property
    def stars(self) -> str:
        return "★" * self.difficulty + "☆" * (3 - self.difficulty)

    @property
    def header(self) -> str:
        """One line for a statement's top: chapter section, difficulty, points."""
        kind = tr(*KINDS[self.kind])
        return tr(f"{self.section} · {kind} · 难度 {self.stars} · {self.points} 分",
                  f"{self.section} · {kind} · difficulty {self.stars} · {self.points} points")


@dataclass(frozen=True)
class TestFile:
    """One test file's source and what it declares (parsed once, here)."""

    name: str      # "test_public.py" or "test_hidden.py"
    source: str

    @property
    def kind(self) -> str:
        return "public" if "public" in self.name else "hidden"

    @cached_property
    def tree(self) -> ast.Module:
        return ast.parse(self.source)

    @cached_property
    def test_names(self) -> list[str]:
        """The top-level ``def test_*`` functions, in order."""
        return [n.name for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]

    @cached_property
    def submission_names(self) -> list[str]:
        """The names imported with ``from submission import ...``."""
        names: list[str] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and node.module == "submission":
                names += [a.name for a in node.names if a.name not in names]
        return names

    @cached_property
    def forbidden_modules(self) -> dict[str, list[str]]:
        """For each learner function named in an ``assert_not_using(fn, "module", ...)`` call, the modules named
        there: the learner process refuses calls into them while that function runs ("*": a call whose first
        argument is not one of the names imported from ``submission``, e.g. a loop variable, forbids them for
        every function)."""
        found: dict[str, list[str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) \
                    == "assert_not_using" and node.args:
                first = node.args[0]
                key = first.id if isinstance(first, ast.Name) and first.id in self.submission_names else "*"
                mods = found.setdefault(key, [])
                mods += [a.value for a in node.args[1:] if isinstance(a, ast.Constant) and type(a.value) is str
                         and a.value not in mods]
        return found

    @cached_property
    def imports(self) -> list[str]:
        """Modules the file imports (not the learner's): the checker imports them before the learner starts."""
        out: list[str] = []
        for node in ast.walk(self.tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
            out += [n for n in names if n.split(".")[0] != "submission" and n not in out]
        return out


def test_names(source: str) -> list[str]:
    """The top-level ``def test_*`` functions of a test file, in order."""
    return TestFile("test.py", source).test_names


# ---- front matter and loading ---------------------------------------------------------------------------------

def parse_front_matter(text: str, where: str) -> tuple[dict, str]:
    """``---`` / ``key: value`` lines / ``---`` then the body.  Values: int, float, [a, b] lists or strings."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in [ln.strip() for ln in lines[1:]]:
        raise ValueError(f"{where}: expected front matter between two '---' lines at the top")
    end = 1 + [ln.strip() for ln in lines[1:]].index("---")
    meta = {}
    for ln in lines[1:end]:
        if not ln.strip():
            continue
        key, sep, value = ln.partition(":")
        if not sep:
            raise ValueError(f"{where}: front matter line {ln!r} is not 'key: value'")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key.strip()] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
        elif re.fullmatch(r"-?\d+", value):
            meta[key.strip()] = int(value)
        elif re.fullmatch(r"-?\d+\.\d*", value):
            meta[key.strip()] = float(value)
        else:
            meta[key.strip()] = value.strip("'\"")
    return meta, "\n".join(lines[end + 1:]).strip() + "\n"


def load_problem(directory: Path, solutions: Path = SOLUTIONS) -> Problem:
    """One exercise from ``problem.md``: front matter (``title`` and ``section`` in Chinese, ``title_en`` and
    ``section_en`` in English, ...), then the statement as ``~~ zh`` / ``~~ en`` twins (course/twins.py)."""
    where = f"{directory.name}/problem.md"
    meta, body = parse_front_matter((directory / "problem.md").read_text(encoding="utf-8"), where)
    for key, kind in (("title", str), ("title_en", str), ("chapter", int), ("section", str), ("section_en", str),
                      ("difficulty", int), ("points", int), ("requires", list)):
        if not isinstance(meta.get(key), kind):
            raise ValueError(f"{where}: front matter needs {key} ({kind.__name__}), got {meta.get(key)!r}")
    if not 1 <= meta["chapter"] <= 8:
        raise ValueError(f"{where}: chapter must be 1..8, got {meta['chapter']}")
    if not 1 <= meta["difficulty"] <= 3:
        raise ValueError(f"{where}: difficulty must be 1..3, got {meta['difficulty']}")
    if meta.get("kind") not in KINDS:
        raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, got {meta.get('kind')!r}")
    timeout = meta.get("timeout", DEFAULT_TIMEOUT)
    if type(timeout) not in (int, float) or not timeout > 0:
        raise ValueError(f"{where}: timeout must be a positive number of seconds, got {timeout!r}")
    processes = meta.get("processes", 1)
    if type(processes) is not int or not 1 <= processes <= 64:
        raise ValueError(f"{where}: processes must be an integer 1..64, got {processes!r}")
    statements = twins.parse(body.splitlines(), where)
    missing = [lang for lang in LANGS if not statements.bodies.get(lang, "").strip()]
    if missing:
        raise ValueError(f"{where}: no {' or '.join(missing)} statement (open each with a '~~ zh' / '~~ en' line)")
    return Problem(directory.name, {"zh": meta["title"], "en": meta["title_en"]}, meta["chapter"], meta["points"],
                   meta["requires"], float(timeout), statements, directory, solutions / f"{directory.name}.py",
                   {"zh": meta["section"], "en": meta["section_en"]}, meta["difficulty"], meta["kind"], processes)


def stamp_statement(problem: Problem) -> None:
    """Record in ``problem.md`` that its two statements say the same now (see course/twins.py)."""
    path = problem.dir / "problem.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(twins.restamp(lines, problem.statements)) + "\n", encoding="utf-8")


def load_problems(problems: Path = PROBLEMS, solutions: Path = SOLUTIONS) -> list[Problem]:
    """Every exercise, by chapter then slug."""
    if not problems.is_dir():
        raise JudgeError(f"no exercises directory {problems}")
    found = [load_problem(d, solutions) for d in sorted(problems.iterdir()) if (d / "problem.md").is_file()]
    return sorted(found, key=lambda p: (p.chapter, p.slug))


def find(problems: list[Problem], slug: str) -> Problem:
    for p in problems:
        if p.slug == slug:
            return p
    raise JudgeError(tr(f"没有这道题 (unknown exercise) {slug!r}；可选 (known): {', '.join(p.slug for p in problems)}",
                        f"unknown exercise {slug!r}; known: {', '.join(p.slug for p in problems)}"))


def make_starter(solution_source: str) -> str:
    """The starter: the solution with each BEGIN/END SOLUTION block replaced by ``raise NotImplementedError``."""
    out, inside = [], False
    for n, line in enumerate(solution_source.splitlines(), 1):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError(f"line {n}: {BEGIN} inside another solution block")
            indent = line[:len(line) - len(line.lstrip())]
            out.append(f"{indent}raise NotImplementedError  # TODO: your code here")
            inside = True
        elif marker == END:
            if not inside:
                raise ValueError(f"line {n}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} is never closed")
    return "\n".join(out) + "\n"


# ---- checksums --------------------------------------------------------------------------------------------------

def _relative(path: Path) -> str:
    """A trusted file as written in SHA256SUMS: relative to the repository's problems directory (``../sandbox.py``),
    whichever problems directory is being graded (the judge's code is always the repository's)."""
    return Path(os.path.relpath(path, PROBLEMS)).as_posix()


def guarded_files(problems: list[Problem]) -> list[tuple[str, Path]]:
    """(name in SHA256SUMS, path) of every test file and every trusted file that exists."""
    files = [(f"{p.slug}/{name}", p.dir / name) for p in problems for name in TEST_FILES]
    trusted = [REPO / f for f in TRUSTED_FILES if (REPO / f).is_file()]
    return files + [(_relative(path), path) for path in trusted]


def checksums(problems: list[Problem]) -> str:
    lines = [f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}"
             for name, path in guarded_files(problems)]
    return "\n".join(lines) + "\n"


def _recorded(problems_dir: Path) -> dict[str, str]:
    sums_file = problems_dir / "SHA256SUMS"
    sums = {}
    if sums_file.is_file():
        for ln in sums_file.read_text().splitlines():
            digest, _, name = ln.partition("  ")
            sums[name] = digest
    return sums


def stale_sources(problems: list[Problem], problems_dir: Path = PROBLEMS) -> list[str]:
    """What ``sync`` would change (out-of-date starters and checksums, also tampered test or judge files) and the
    statements whose two languages drifted apart (``sync --stamp SLUG`` records that they match again)."""
    stale = []
    for p in problems:
        stale += [f"{line} (then: judge.py sync --stamp {p.slug})" for line in p.statements.problems()]
        if not p.solution.is_file():
            stale.append(f"{p.slug}: missing solution {p.solution}")
        elif not p.starter.is_file() or p.starter.read_text() != make_starter(p.solution.read_text()):
            stale.append(f"{p.slug}/starter.py is not derived from solutions/{p.slug}.py (run: judge.py sync)")
    sums = problems_dir / "SHA256SUMS"
    if not sums.is_file() or sums.read_text() != checksums(problems):
        recorded = _recorded(problems_dir)
        changed = [name for name, path in guarded_files(problems)
                   if recorded.get(name) != hashlib.sha256(path.read_bytes()).hexdigest()]
        stale.append(f"{sums.name} does not match the test files ({', '.join(changed[:4]) or 'extra lines'}; "
                     "run: judge.py sync)")
    return stale


def read_tests(problem: Problem, problems_dir: Path | None = None) -> dict[str, str]:
    """The test files' sources, read once before any learner code runs.  Refuses (JudgeError) when a test file or
    a file the grading trusts differs from SHA256SUMS."""
    problems_dir = problems_dir or problem.dir.parent
    sums = _recorded(problems_dir)
    for name, path in guarded_files([]):
        if sums.get(name) != hashlib.sha256(path.read_bytes()).hexdigest():
            raise JudgeError(tr(f"评测程序的文件被改动过 (judge file modified): {path}；"
                                f"请恢复它 (git checkout -- {path})。改了评测程序请运行 judge.py sync",
                                f"a file of the judge was modified: {path}; restore it (git checkout -- {path}), "
                                "or, if you changed the judge, run judge.py sync"))
    sources = {}
    for name in TEST_FILES:
        data = (problem.dir / name).read_bytes()
        if sums.get(f"{problem.slug}/{name}") != hashlib.sha256(data).hexdigest():
            raise JudgeError(tr(f"测试文件被改动过 (test file modified): {problem.dir / name}；"
                                f"请恢复它 (git checkout -- {problem.dir / name})。出题人改了测试请运行 judge.py sync",
                                f"a test file was modified: {problem.dir / name}; restore it (git checkout -- "
                                f"{problem.dir / name}), or, if you are the author and changed it, run judge.py sync"))
        sources[name] = data.decode("utf-8")
    return sources
