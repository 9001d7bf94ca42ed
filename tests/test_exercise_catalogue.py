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
        assert p.section.startswith(f"第 {p.chapter} 章"), f"{p.slug}: section {p.section!r} is not in its chapter"
        assert "怎么判" in p.statement or "判分" in p.statement, f"{p.slug}: the statement does not say how it is checked"


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
