"""An exercise the chapter already answers teaches nothing: the chapter's own printed code, pasted as an answer, fails.

For every exercise, ``tests/chapter_answers/<slug>.py`` is a complete submission made of what its chapter prints
(code, a formula, a table), adapted as a learner would paste it; its docstring names the cells it transcribes.  The
judge must not give it full marks.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from practice.exercises import load_problems  # noqa: E402

ANSWERS = ROOT / "tests" / "chapter_answers"
PROBLEMS = load_problems()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("slug", [p.slug for p in PROBLEMS])
def test_the_chapters_own_code_does_not_pass(slug):
    answer = ANSWERS / f"{slug}.py"
    assert answer.is_file(), f"{slug}: no {answer.relative_to(ROOT)} (the chapter's printed code as an answer)"
    doc = ast.get_docstring(ast.parse(answer.read_text(encoding="utf-8")))
    assert doc, f"{answer.name}: say in its docstring which cells of the chapter it transcribes"
    proc = subprocess.run([sys.executable, "practice/judge.py", "test", slug, str(answer)], cwd=ROOT,
                          capture_output=True, text=True, timeout=880)
    assert proc.returncode == 1, (f"{slug}: the chapter's own code is graded as a full answer (exit "
                                  f"{proc.returncode}):\n{proc.stdout[-1500:]}{proc.stderr[-500:]}")
    assert proc.stdout.strip().splitlines()[-1].endswith("failed") and " 0 failed" not in proc.stdout.splitlines()[-1]
