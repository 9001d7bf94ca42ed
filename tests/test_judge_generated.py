"""Every generated file is current (what `make check` verifies in one pass before grading the solutions)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECKS = {
    "chapter notebooks": ["course/chapters/_src/build.py", "--check"],
    "nbgrader sources": ["instructor/generate.py", "--check"],
    "starters and SHA256SUMS": ["practice/judge.py", "sync", "--check"],
}


def test_every_generated_file_is_current():
    stale = []
    for what, command in CHECKS.items():
        proc = subprocess.run([sys.executable, *command], cwd=REPO, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            stale.append(f"{what}: {proc.stdout.strip() or proc.stderr.strip()}")
    assert not stale, "\n".join(stale)


def test_a_stale_chapter_is_named(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO / "course" / "chapters" / "_src"))
    import build

    source = tmp_path / "09_extra.py"
    source.write_text("# %% [markdown] title\n# ~~ zh\n# 标题\n# ~~ en\n# Title\n\n# %%\nx = 1\n")
    monkeypatch.setattr(build, "EDITIONS", {"zh": tmp_path, "en": tmp_path / "en"})
    build.stamp(source, [])
    both = [tmp_path / "09_extra.ipynb", tmp_path / "en" / "09_extra.ipynb"]
    assert build.stale([source]) == both   # missing
    build.build(source)
    assert build.stale([source]) == []
    source.write_text(source.read_text() + "y = 2\n")
    assert build.stale([source]) == both   # changed code: both editions


def test_a_stale_starter_is_named(tmp_path):
    import shutil
    problems, solutions = tmp_path / "problems", tmp_path / "solutions"
    shutil.copytree(REPO / "practice/problems", problems)
    shutil.copytree(REPO / "solutions", solutions)
    (solutions / "v-placement.py").write_text((solutions / "v-placement.py").read_text() + "\n# edited\n")
    proc = subprocess.run([sys.executable, "practice/judge.py", "--problems", problems, "--solutions", solutions,
                           "sync", "--check"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "out of date: v-placement/starter.py" in proc.stdout, proc.stdout


def test_a_rewritten_judge_file_stops_grading(tmp_path):
    """SHA256SUMS covers the checker, the learner runtime and course/checks.py: a submission that rewrote one of them
    (the route that used to make later starters pass) makes every later run refuse to grade."""
    import shutil
    sys.path.insert(0, str(REPO))
    from practice import exercises

    problems = tmp_path / "problems"
    shutil.copytree(REPO / "practice/problems", problems)
    sums = problems / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    sums.write_text("\n".join(("0" * 64 + "  ../checker.py") if ln.endswith("  ../checker.py") else ln
                              for ln in lines) + "\n")
    problem = exercises.find(exercises.load_problems(problems), "bubble-ratio")
    try:
        exercises.read_tests(problem, problems)
    except exercises.JudgeError as e:
        assert "judge file modified" in str(e) and "checker.py" in str(e)
    else:
        raise AssertionError("a changed judge file was not noticed")
    assert any("checker.py" in s for s in exercises.stale_sources([problem], problems))
