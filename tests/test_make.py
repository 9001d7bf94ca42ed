"""The Makefile's targets as a user calls them: `make bench` fails on a missed target, `make lab` passes ARGS on,
`make lab-reset` needs a chapter.  (The targets' own programs are tested elsewhere: tests/test_lab.py,
tests/browser/test_lab_server.py.)"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from targets import Targets  # noqa: E402


def make(*args, timeout=120):
    # -o: never rebuild the environment from here (it exists: these tests run in it)
    return subprocess.run(["make", "-o", ".venv/.installed", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_a_benchmark_exits_1_when_one_of_its_targets_is_missed(capsys):
    targets = Targets()
    assert targets.check("fast enough", True) == "met" and targets.exit_code() == 0
    assert targets.check("small enough", False) == "MISSED"
    assert targets.exit_code() == 1 and "MISSED 1 target: small enough" in capsys.readouterr().out


def test_make_bench_runs_every_benchmark_and_fails_naming_the_ones_that_missed(tmp_path):
    scripts = []
    for name, code in (("misses", 1), ("meets", 0), ("also_misses", 1)):
        path = tmp_path / f"bench_{name}.py"
        path.write_text(f"print('{name} ran')\nraise SystemExit({code})\n")
        scripts.append(str(path))
    result = make("bench", f"BENCHMARKS={' '.join(scripts)}")
    assert result.returncode != 0, result.stdout
    assert all(f"{name} ran" in result.stdout for name in ("misses", "meets", "also_misses"))   # none skipped
    assert f"bench: missed a target (or failed): {scripts[0]} {scripts[2]}" in result.stdout
    scripts.pop(0), scripts.pop(-1)
    ok = make("bench", f"BENCHMARKS={' '.join(scripts)}")
    assert ok.returncode == 0 and "bench: every target met" in ok.stdout


def test_make_lab_passes_its_args_to_jupyterlab():
    dry = make("-n", "lab", "ARGS=--no-browser --port 8899 --ip 127.0.0.1")
    assert dry.returncode == 0, dry.stderr
    assert "-m course.lab --no-browser --port 8899 --ip 127.0.0.1" in dry.stdout


def test_make_lab_reset_needs_a_chapter():
    result = make("lab-reset")
    assert result.returncode != 0 and "make lab-reset CHAPTER=01_bubble" in result.stderr
