"""The command line: `python -m course ...` as a user types it."""

import json
import subprocess
import sys

import pytest

from course.cli import main


def run(*args):
    """Run the CLI in a fresh interpreter; return (exit code, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def test_sim_ascii_shows_the_seed_timeline():
    code, out, _ = run("sim", "1f1b", "-p", "4", "-m", "8", "--ascii")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "rank 0 |0123......aa4bb5cc6dd7ee.ff.gg.hh|"
    assert lines[3] == "rank 3 |...0aa1bb2cc3dd4ee5ff6gg7hh......|"
    assert "makespan 33" in lines[4]


def test_sim_json(capsys):
    assert main(["sim", "gpipe", "-p", "4", "-m", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schedule"] == "gpipe" and (out["p"], out["m"], out["v"]) == (4, 8, 1)
    assert out["makespan"] == 33 and out["peak_activations"] == [8, 8, 8, 8]
    assert out["busy"] == [24, 24, 24, 24] and out["idle"] == [9, 6, 3, 0]
    assert round(out["bubble_ratio"], 3) == 0.273


def test_sim_costs_and_latency(capsys):
    assert main(["sim", "1f1b", "-p", "4", "-m", "8", "--b", "0.5", "--w", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == 22
    assert main(["sim", "1f1b", "-p", "2", "-m", "1", "--f", "1,3", "--comm", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == 1 + 0.5 + 3 + 2 + 0.5 + 2


def test_sim_plan_file(tmp_path, capsys):
    f = tmp_path / "mine.plan"
    f.write_text("# 1F1B on two ranks\nF0 F1 B0 B1\nF0 B0 F1 B1\n")
    assert main(["sim", "--plan", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["p"], out["m"], out["makespan"]) == (2, 2, 9)


def test_plan_command(capsys):
    assert main(["plan", "1f1b", "-p", "2", "-m", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == ["F0 F1 B0 F2 B1 B2", "F0 B0 F1 B1 F2 B2"]
    assert main(["plan", "gpipe", "-p", "2", "-m", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ranks"] == [["F0", "B0"], ["F0", "B0"]]


def test_schedules_lists_the_registry(capsys):
    assert main(["schedules"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert {"gpipe", "1f1b"} <= set(names)


def test_png(tmp_path):
    out = tmp_path / "t.png"
    code, stdout, _ = run("sim", "gpipe", "-p", "3", "-m", "4", "--png", str(out))
    assert code == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args,message", [
    (["sim", "1f1b", "-p", "0", "-m", "8"], "argument -p: expected a positive integer (>= 1), got 0"),
    (["sim", "1f1b", "-p", "4", "-m", "x"], "argument -m: expected a positive integer, got 'x'"),
    (["sim", "nope", "-p", "4", "-m", "8"], "unknown schedule 'nope'; known: gpipe, 1f1b"),
    (["sim", "1f1b", "-p", "4"], "1f1b needs -p P and -m M"),
    (["sim", "1f1b", "-p", "4", "-m", "8", "--f", "-1"], "expected non-negative values"),
    (["sim", "--plan", "/nonexistent.plan"], "plan file '/nonexistent.plan' not found"),
    (["sim", "1f1b", "-p", "2", "-m", "2", "-v", "2"], "1f1b does not take v"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_bad_arguments_exit_2_with_one_line(args, message):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert message in err and "Traceback" not in err


def test_malformed_or_deadlocked_plan_file(tmp_path):
    bad = tmp_path / "bad.plan"
    bad.write_text("F0 B0 B0\nF0 B0\n")
    code, _, err = run("sim", "--plan", str(bad))
    assert code == 2 and "duplicate op B0.s0" in err and len(err.splitlines()) == 1
    stuck = tmp_path / "stuck.plan"
    stuck.write_text("F0 B0 F1 B1\nF0 F1 B0 B1\n")
    code, _, err = run("sim", "--plan", str(stuck))
    assert code == 2 and err.startswith("error: deadlock after 2/8 steps")


def test_plan_torch_csv(capsys):
    assert main(["plan", "zb-h1", "-p", "2", "-m", "2", "--torch"]) == 0
    assert capsys.readouterr().out.splitlines() == ["0F0,0F1,0I0,0W0,0I1,0W1", "1F0,1I0,1F1,1I1,1W0,1W1"]
    assert main(["plan", "dualpipe", "-p", "2", "-m", "4", "--torch"]) == 2
    assert "export dualpipev instead" in capsys.readouterr().err
