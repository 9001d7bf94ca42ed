"""The exercises as a whole: coverage per chapter, a design problem in each, every one linked from its chapter,
statements that say what is checked, and points that follow difficulty."""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from practice.exercises import load_problem, load_problems  # noqa: E402

PROBLEMS = load_problems()
CHAPTERS = sorted((ROOT / "course" / "chapters" / "_src").glob("0*.py"))
START = re.compile(r"python practice/judge\.py start ([a-z0-9-]+)")


def test_at_least_twenty_exercises_two_per_chapter_and_a_design_problem_in_each():
    by_chapter = defaultdict(list)
    for p in PROBLEMS:
        by_chapter[p.chapter].append(p)
    assert len(PROBLEMS) >= 20
    assert sorted(by_chapter) == list(range(1, len(CHAPTERS) + 1))
    for chapter, problems in by_chapter.items():
        assert len(problems) >= 2, f"chapter {chapter} has {len(problems)} exercise(s)"
        assert any(p.kind == "design" for p in problems), f"chapter {chapter} has no design problem"


def test_every_exercise_is_linked_from_its_own_chapter_only():
    linked = {}
    for path in CHAPTERS:
        chapter = int(path.name[:2])
        for slug in START.findall(path.read_text(encoding="utf-8")):
            linked.setdefault(slug, set()).add(chapter)
    for p in PROBLEMS:
        assert linked.get(p.slug) == {p.chapter}, f"{p.slug} (chapter {p.chapter}) is linked from {linked.get(p.slug)}"


def test_statements_say_how_they_are_checked_and_which_section_they_practise():
    for p in PROBLEMS:
        zh, en = p.statements.bodies["zh"], p.statements.bodies["en"]
        assert p.sections["zh"].startswith(f"第 {p.chapter} 章"), f"{p.slug}: section {p.sections['zh']!r}"
        assert p.sections["en"].startswith(f"Chapter {p.chapter} "), f"{p.slug}: section {p.sections['en']!r}"
        assert "怎么判" in zh or "判分" in zh, f"{p.slug}: the Chinese statement does not say how it is checked"
        assert re.search(r"how (it|this|your \w+) (is|are) (checked|graded)|graded by|checked by", en, re.I), \
            f"{p.slug}: the English statement does not say how it is checked"


def test_statements_exist_in_both_languages_and_match():
    """Each statement in Chinese and in English, the English free of Chinese, both stamped as saying the same
    (course/twins.py; `judge.py sync --stamp SLUG` after checking a translation)."""
    han = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
    for p in PROBLEMS:
        assert han.search(p.titles["zh"] + p.statements.bodies["zh"]), f"{p.slug}: no Chinese statement"
        english = p.titles["en"] + p.sections["en"] + p.statements.bodies["en"]
        hit = han.search(english)
        assert not hit, (f"{p.slug}: Chinese in the English statement: "
                         f"{english[max(0, hit.start() - 30):hit.end() + 30]!r}")
        assert p.statements.problems() == [], p.statements.problems()


def test_points_follow_difficulty():
    allowed = {1: range(10, 16), 2: range(15, 21), 3: range(20, 26)}
    for p in PROBLEMS:
        assert p.points in allowed[p.difficulty], f"{p.slug}: {p.points} points at difficulty {p.difficulty}"


def test_an_exercise_declares_the_processes_a_test_keeps_busy(tmp_path):
    """Graders that run several submissions at once count them (instructor/grade.py)."""
    assert {p.slug: p.processes for p in PROBLEMS if p.processes != 1} == {"live-1f1b": 4}
    source = (ROOT / "practice" / "problems" / "bubble-ratio" / "problem.md").read_text(encoding="utf-8")
    for bad in ("0", "2.5", "many", "65"):
        (tmp_path / "x").mkdir(exist_ok=True)
        (tmp_path / "x" / "problem.md").write_text(source.replace("---\n", f"---\nprocesses: {bad}\n", 1))
        with pytest.raises(ValueError, match=r"processes must be an integer 1\.\.64"):
            load_problem(tmp_path / "x")
