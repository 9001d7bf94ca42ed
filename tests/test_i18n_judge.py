"""The judge in both languages: the one language rule (course/i18n.py), every learner-facing message in zh and en,
and the judge run in English on one exercise of every chapter (starter and reference solution)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course import i18n

REPO = Path(__file__).resolve().parents[1]
JUDGE = REPO / "practice" / "judge.py"
HAN = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")   # CJK ideographs and full-width punctuation
# Every file whose messages a learner reads: the judge, its processes, the checks, the tests' own hints.
MESSAGE_FILES = sorted(
    [REPO / "practice" / f"{name}.py" for name in ("judge", "checker", "sandbox", "learner", "exercises", "contain",
                                                    "wire")]
    + [REPO / "course" / f for f in ("checks.py", "live_checks.py", "live/relay.py", "notebook_setup.py",
                                     "scoring.py")]
    + list((REPO / "practice" / "problems").glob("*/test_*.py")))
# One quick exercise of each chapter that has exercises.
ONE_PER_CHAPTER = {1: "bubble-ratio", 2: "event-simulator", 3: "token-normalized-loss", 4: "interleaved-memory",
                   5: "building-block-memory", 6: "v-placement", 7: "micro-batch-order", 8: "activation-bytes"}
# A chapter whose exercise imports torch in the learner and the checker takes seconds per judge run: not the
# quick lane's (tests/conftest.py), still the whole suite's.
TORCH_CHAPTERS = {ch for ch, slug in ONE_PER_CHAPTER.items()
                  if any(re.search(r"^(?:import|from) torch\b", test.read_text(encoding="utf-8"), re.M)
                         for test in (REPO / "practice" / "problems" / slug).glob("test_*.py"))}
LOCALE = ("COURSE_LANG", *i18n.LOCALE_VARS)


def judge(*args, **env) -> subprocess.CompletedProcess:
    """The judge with ``env`` in place of the test runner's language settings (none of them, by default)."""
    clean = {k: v for k, v in os.environ.items() if k not in LOCALE}
    return subprocess.run([sys.executable, str(JUDGE), *map(str, args)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**clean, **env})


# ---- the rule --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("env, lang", [
    ({}, "zh"),                                           # nothing chosen: the course's first language
    ({"LANG": "C.UTF-8"}, "zh"), ({"LC_ALL": "POSIX"}, "zh"),   # locales that name no language
    ({"LANG": "en_US.UTF-8"}, "en"), ({"LANG": "de_DE.UTF-8"}, "en"), ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LC_ALL": "C", "LANG": "en_GB.UTF-8"}, "en"),       # C passed over, the next variable decides
    ({"LANG": "zh_TW.UTF-8", "COURSE_LANG": "en"}, "en"), ({"LANG": "en_US.UTF-8", "COURSE_LANG": "zh"}, "zh"),
])
def test_the_language_rule(monkeypatch, env, lang):
    for var in LOCALE:
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert i18n.language() == lang
    i18n.set_language("en" if lang == "zh" else "zh")
    try:
        assert i18n.language() != lang    # set_language wins over the environment
    finally:
        i18n.set_language(None)


def test_a_language_the_course_does_not_have_is_one_clear_line():
    proc = judge("list", COURSE_LANG="fr")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "judge: COURSE_LANG 'fr' is not one of the course's languages: use zh or en"


# ---- every message in both languages ---------------------------------------------------------------------------

def _text(node: ast.AST) -> str:
    return "".join(c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and type(c.value) is str)


def untranslated(path: Path) -> list[str]:
    """Chinese string literals of ``path`` that are neither docstrings nor the Chinese side of a ``tr(zh, en)``
    call or of a ``(zh, en)`` pair (given to ``tr(*pair)``), and English sides that hold Chinese."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    allowed: set[int] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            allowed.add(id(node.body[0].value))
        pair = None
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "tr":
            pair = node.args
            if len(pair) == 1 and isinstance(pair[0], ast.Starred):   # tr(*PAIR): the pair is checked as a tuple
                continue
            if len(pair) != 2 or node.keywords:
                found.append(f"{where}:{node.lineno}: tr() takes (zh, en)")
                continue
        elif isinstance(node, ast.Tuple) and len(node.elts) == 2 and all(
                isinstance(e, (ast.Constant, ast.JoinedStr)) for e in node.elts) and HAN.search(_text(node.elts[0])):
            pair = node.elts
        if pair is not None:
            if HAN.search(_text(pair[1])):
                found.append(f"{where}:{node.lineno}: the English side holds Chinese: "
                             f"{_text(pair[1])[:60]!r}")
            allowed.update(id(sub) for side in pair for sub in ast.walk(side))   # the English side: reported above
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is str and HAN.search(node.value) \
                and id(node) not in allowed:
            found.append(f"{where}:{node.lineno}: only in Chinese: {node.value[:60]!r}")
    return found


def test_every_learner_facing_message_comes_in_both_languages():
    assert len(MESSAGE_FILES) > 20
    problems = [line for path in MESSAGE_FILES for line in untranslated(path)]
    assert problems == [], "\n".join(problems)


def test_the_scan_finds_a_message_only_in_chinese(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""文档。"""\nfrom course.i18n import tr\nOK = tr("好", "fine")\nPAIR = ("对", "right")\n'
                   'BAD = f"错了 {OK}"\nMIXED = tr("好", "好 fine")\n', encoding="utf-8")
    found = untranslated(bad)
    assert len(found) == 2 and "错了" in found[1] and "English side" in found[0], found


def test_starters_and_solutions_are_in_english():
    files = list((REPO / "practice" / "problems").glob("*/starter.py")) + list((REPO / "solutions").glob("*.py"))
    assert len(files) >= 40
    chinese = [f"{f.relative_to(REPO)}:{n}" for f in files
               for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if HAN.search(line)]
    assert chinese == []


# ---- the judge in English, one exercise of every chapter -------------------------------------------------------

def test_one_exercise_of_every_chapter_is_covered():
    from practice.exercises import load_problems
    problems = load_problems()
    chapters = {p.chapter for p in problems}
    assert set(ONE_PER_CHAPTER) == chapters
    assert all(next(p for p in problems if p.slug == slug).chapter == ch for ch, slug in ONE_PER_CHAPTER.items())


@pytest.mark.parametrize("chapter", [pytest.param(ch, marks=[pytest.mark.slow] if ch in TORCH_CHAPTERS else [])
                                     for ch in sorted(ONE_PER_CHAPTER)])
def test_the_judge_speaks_english_on_every_chapter(chapter, tmp_path):
    slug = ONE_PER_CHAPTER[chapter]
    start = judge("--lang", "en", "--workspace", tmp_path, "start", slug, LANG="zh_CN.UTF-8")   # --lang wins
    assert start.returncode == 0 and not HAN.search(start.stdout), start.stdout
    assert f"chapter {chapter}" in start.stdout.lower() and "points" in start.stdout
    assert (tmp_path / f"{slug}.py").read_text() == (REPO / "practice/problems" / slug / "starter.py").read_text()

    starter = judge("--lang", "en", "--workspace", tmp_path, "test", slug)
    assert starter.returncode == 1, starter.stdout + starter.stderr
    assert not HAN.search(starter.stdout), starter.stdout
    assert "not implemented yet (NotImplementedError)" in starter.stdout
    assert re.search(r"^  score: 0/\d+$", starter.stdout, re.M), starter.stdout
    assert re.fullmatch(r"0 passed, [1-9]\d* failed", starter.stdout.strip().splitlines()[-1])

    solution = judge("test", slug, REPO / "solutions" / f"{slug}.py", COURSE_LANG="en", LANG="zh_CN.UTF-8")
    assert solution.returncode == 0, solution.stdout + solution.stderr
    assert not HAN.search(solution.stdout), solution.stdout
    points = re.search(r"^  score: (\d+)/(\d+)$", solution.stdout, re.M)
    assert points and points[1] == points[2], solution.stdout
    assert re.fullmatch(r"[1-9]\d* passed, 0 failed", solution.stdout.strip().splitlines()[-1])


def test_hints_and_the_learner_process_speak_english(tmp_path):
    # bubble_ratio wrong (an English hint from the tests), bubble_from_spans returning what cannot cross back, too
    # deeply nested (a message of the contained learner process, which got COURSE_LANG from the judge)
    path = tmp_path / "wrong.py"
    path.write_text("def bubble_ratio(p, m, v=1):\n    return 0.5\n\n\n"
                    "def bubble_from_spans(spans):\n    deep = []\n    for _ in range(500):\n        deep = [deep]\n"
                    "    return deep\n")
    proc = judge("test", "bubble-ratio", path, COURSE_LANG="en")
    assert proc.returncode == 1 and not HAN.search(proc.stdout), proc.stdout
    assert "\n        hint: " in proc.stdout or "\n  hint: " in proc.stdout, proc.stdout
    assert "the return value cannot be sent back" in proc.stdout, proc.stdout
    assert "expected" in proc.stdout and "got" in proc.stdout
    chinese = judge("test", "bubble-ratio", path, COURSE_LANG="zh")
    assert "返回值无法传回" in chinese.stdout and "提示 (hint)" in chinese.stdout, chinese.stdout


def test_chinese_is_the_default(tmp_path):
    """Without COURSE_LANG and without a locale that names a language, the judge speaks Chinese."""
    for env in ({}, {"LANG": "C.UTF-8"}):
        proc = judge("test", "bubble-ratio", REPO / "practice/problems/bubble-ratio/starter.py", **env)
        assert proc.returncode == 1
        assert "第 1 章" in proc.stdout and "还没有实现 (NotImplementedError)" in proc.stdout, proc.stdout
        assert re.search(r"^  得分 \(score\): 0/\d+$", proc.stdout, re.M), proc.stdout
        assert re.fullmatch(r"0 passed, [1-9]\d* failed", proc.stdout.strip().splitlines()[-1])
