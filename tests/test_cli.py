"""The command line: `python -m course ...` as a user types it."""

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time

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


# ---- bad input is refused with one line (issue 12 item 6) ---------------------------------------------------
def one_line_error(code, out, err, *needles, status=2):
    assert code == status and out == "", (code, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("args", [
    ["sim", "1f1b", "-p", "2", "-m", "2", "--comm", "nan"],
    ["sim", "1f1b", "-p", "2", "-m", "2", "--f", "inf"],
    ["sim", "1f1b", "-p", "2", "-m", "2", "--b", "1,nan"],
    ["sim", "1f1b", "-p", "2", "-m", "2", "--overlap", "nan"],
    ["sim", "1f1b", "-p", "2", "-m", "2", "--w-mem=-inf"],
    ["sim", "1f1b", "-p", "2", "-m", "2", "--act", "NaN"],
    ["sim", "1f1b", "-p", "2", "-m", "2", "--mb-scale", "1,inf"],
    ["order", "--costs", "1,nan", "-p", "2"],
    ["order", "--costs", "1,2", "-p", "2", "--comm", "inf"],
    ["partition", "--layers", "1,inf,2", "-p", "2"],
    ["partition", "--layers", "1,1,2", "-p", "2", "--comm", "nan"],
    ["live", "1f1b", "-p", "2", "-m", "2", "--unit-ms", "nan"],
    ["live", "1f1b", "-p", "2", "-m", "2", "--timeout", "inf"],
    ["live", "1f1b", "-p", "2", "-m", "2", "--comm", "nan"],
])
def test_nan_and_infinities_are_refused(args):
    one_line_error(*run(*args), "finite")


def test_json_output_is_standard_json(capsys):
    def no_constants(name):
        raise AssertionError(f"non-standard JSON token {name}")

    for args in (["sim", "dualpipev", "-p", "2", "-m", "4", "--overlap", "0.5", "--json"],
                 ["order", "--costs", "1,3,2", "-p", "2", "--json"], ["plan", "1f1b", "-p", "2", "-m", "2", "--json"],
                 ["partition", "--layers", "1,2,3", "-p", "2", "--json"]):
        assert main(args) == 0
        json.loads(capsys.readouterr().out, parse_constant=no_constants)


@pytest.mark.parametrize("args,needle", [
    (["sim", "1f1b", "-p", "100000", "-m", "100000"], "memory available"),
    (["plan", "gpipe", "-p", "100000", "-m", "100000"], "memory available"),
    (["sim", "1f1b", "-p", "64", "-m", "1024", "--iterations", "1000000"], "x 1000000 iterations"),
    (["order", "--costs", "1,2", "-p", "1000000000000"], "memory available"),
    (["partition", "--layers", ",".join(["1"] * 50000), "-p", "1000"], "--method greedy"),
    pytest.param(["live", "gpipe", "-p", "1000", "-m", "1"], "live processes on", marks=pytest.mark.slow),  # torch
    pytest.param(["live", "1f1b", "-p", "2", "-m", "2", "--width", "1000000"], "GB of memory available",
                 marks=pytest.mark.slow),
])
def test_size_guards_refuse_at_once_and_name_the_override(args, needle):
    t0 = time.monotonic()
    one_line_error(*run(*args), needle, "--force")
    assert time.monotonic() - t0 < 30


def test_mb_scale_must_give_one_value_per_micro_batch():
    one_line_error(*run("sim", "1f1b", "-p", "2", "-m", "4", "--mb-scale", "1,2,3"),
                   "--mb-scale lists 3 values but the plan has 4 micro-batches: give 4")
    one_line_error(*run("sim", "1f1b", "-p", "2", "-m", "4", "--mb-scale", "2"), "give 4, one per micro-batch")


def test_plan_files_that_are_not_plans(tmp_path):
    one_line_error(*run("sim", "--plan", str(tmp_path)), "is not a regular file")
    one_line_error(*run("sim", "--plan", "/dev/null"), "is not a regular file")
    huge = tmp_path / "huge.plan"
    with open(huge, "wb") as f:
        f.truncate(65 * 2 ** 20)          # sparse: refused by its size before a byte is read
    one_line_error(*run("sim", "--plan", str(huge)), "above the limit of 64 MiB", "--force")
    big = tmp_path / "big.plan"
    big.write_text("F0 F99999999999999999999999 B0\nF0 B0\n")
    one_line_error(*run("sim", "--plan", str(big)), "op number 9999999999999999... overflows")
    sparse = tmp_path / "sparse.plan"     # one op numbered 2e9: the plan would need 2e9 micro-batches
    sparse.write_text("F0 B0 F2000000000\nF0 B0\n")
    one_line_error(*run("sim", "--plan", str(sparse)), "memory available", "--force")
    binary = tmp_path / "binary.plan"
    binary.write_bytes(b"\xff\xfe\x00F0")
    one_line_error(*run("sim", "--plan", str(binary)), "is not UTF-8 text")
    one_line_error(*run("sim", "1f1b", "--plan", str(binary)), "either SCHEDULE or --plan")


def test_unwritable_outputs_are_one_line(tmp_path):
    one_line_error(*run("sim", "gpipe", "-p", "2", "-m", "2", "--png", str(tmp_path / "no" / "t.png")),
                   "does not exist")
    one_line_error(*run("sim", "gpipe", "-p", "2", "-m", "2", "--png", str(tmp_path)), "is a directory")
    code, out, err = run("sim", "gpipe", "-p", "2", "-m", "2", "--png", "/dev/full")   # a full disk
    assert code == 2 and err.strip() == "error: cannot write /dev/full: No space left on device", err
    with open("/dev/full", "w") as full:   # stdout on a full disk
        proc = subprocess.run([sys.executable, "-m", "course", "sim", "gpipe", "-p", "2", "-m", "2", "--json"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip().endswith("No space left on device"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("sig,status,line", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_and_sigterm_end_with_one_line(sig, status, line):
    # an exhaustive search over 9! orders runs for minutes: stop it once it is under way
    proc = subprocess.Popen([sys.executable, "-m", "course", "order", "--costs", "5,1,4,2,8,3,7,6,9", "-p", "4",
                             "--policy", "best"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == status and err.strip() == line, (proc.returncode, err)


# ---- layering: the CLI sits on top; nothing below imports it, and no module imports itself back -----------------
def _imports() -> dict[str, set[str]]:
    """course module -> the course modules it imports (lazy imports inside functions included)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = {".".join(f.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): f
             for f in (root / "course").rglob("*.py") if "chapters" not in f.parts}
    graph = {}
    for mod, f in files.items():
        package = mod if f.name == "__init__.py" else mod.rsplit(".", 1)[0]
        deps = set()
        tree = ast.parse(f.read_text())
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and getattr(block.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) in typing_only:      # `if TYPE_CHECKING:` imports are for annotations, never run
                continue
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                    + ([node.module] if node.module else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != mod and not name.startswith(mod + "."):   # a package may import its parts
                    deps.add(name)
        graph[mod] = deps
    return graph


def test_no_import_cycle_and_the_runtime_does_not_import_the_cli():
    graph = _imports()
    assert {"course.live.options", "course.sim", "course.live.launcher"} <= graph["course.live.runner"]
    assert not [m for m in graph if m.startswith("course.live") and any(d.startswith("course.cli") for d in graph[m])]
    assert not {d for d in graph["course.torch_bridge"] if d.startswith(("course.live", "course.cli"))}
    # depth-first search for a cycle
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            assert state.get(d) != 1, f"import cycle: {' -> '.join(path[path.index(d):] + [d])}"
            if d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


# ---- numbers: one rule, and sums that would overflow (issue 21 item 7) ----------------------------------------
@pytest.mark.parametrize("args,needle", [
    (["partition", "--layers", "1e308,1e308,1e308", "-p", "1"], "overflows to inf"),
    (["partition", "--layers", "1,1", "-p", "2", "--comm", "1e308"], "overflows to inf"),
    (["order", "--costs", "1e308,1e308", "-p", "2", "--f", "1e308"], "overflows to inf"),
    (["sim", "1f1b", "-p", "4", "-m", "1_000"], "(ASCII digits"),           # Python's int() would take them
    (["sim", "1f1b", "-p", "\u0664", "-m", "8"], "(ASCII digits"),         # ARABIC-INDIC DIGIT FOUR
    (["sim", "1f1b", "-p", "\uff14", "-m", "8"], "(ASCII digits"),         # FULLWIDTH DIGIT FOUR
    (["sim", "1f1b", "-p", "4", "-m", "8", "--f", "1_0"], "(ASCII digits"),
    (["sim", "1f1b", "-p", "4", "-m", "8", "--comm", "\u0661.5"], "(ASCII digits"),
    (["partition", "--layers", "1,\u0662", "-p", "1"], "(ASCII digits"),
])
def test_numbers_that_overflow_or_are_not_ascii_are_refused(args, needle):
    one_line_error(*run(*args), needle)


def test_plan_file_op_numbers_are_ascii(tmp_path):
    plan = tmp_path / "arabic.plan"
    plan.write_text("F\u0660 B\u0660\nF0 B0\n", encoding="utf-8")
    one_line_error(*run("sim", "--plan", str(plan)), "bad op")


def test_the_size_guard_counts_the_schedules_own_ops():
    from course.cli.args import ops_per_rank_and_microbatch

    assert [ops_per_rank_and_microbatch(s, v) for s, v in (("1f1b", None), ("zb-h1", None), ("interleaved", 2),
                                                            ("zbv", None))] == [2, 3, 4, 6]
    assert ops_per_rank_and_microbatch("interleaved", 1000) == 3000   # too big to build small: the bound


@pytest.mark.slow        # builds and measures the largest plans each guard lets through
def test_the_size_guards_estimate_bounds_what_a_run_holds():
    # The estimate (course.command.BYTES_PER_OP/RANK) against the peak resident memory of the same run, net of
    # the interpreter and its imports (the same command on a tiny plan): above it, and within 3x of it.
    from course.command import BYTES_PER_OP, BYTES_PER_RANK

    def peak_rss(*args):
        # VmHWM, not ru_maxrss: the latter keeps the parent's size across fork and exec
        code = ("import re, sys\nfrom course.cli import main\n"
                f"assert main({list(args)!r} + ['--json']) == 0\n"
                "status = open('/proc/self/status').read()\n"
                "print(int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) * 1024, file=sys.stderr)")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return int(proc.stderr.split()[-1])

    base = peak_rss("sim", "1f1b", "-p", "2", "-m", "2")
    for schedule, p, m, ops in (("1f1b", 4, 60000, 2 * 4 * 60000), ("dualpipev", 4, 40000, 4 * 4 * 40000),
                                ("1f1b", 60000, 2, 2 * 60000 * 2)):
        held = peak_rss("sim", schedule, "-p", str(p), "-m", str(m)) - base
        estimate = ops * BYTES_PER_OP + p * BYTES_PER_RANK
        assert held < estimate < 3 * held, (schedule, p, m, held, estimate)


# ---- output files: whole or not at all, and said on stderr ---------------------------------------------------
def _file_size_limit():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))


@pytest.mark.parametrize("args", [
    ["sim", "gpipe", "-p", "4", "-m", "16", "--trace"],
    ["sim", "gpipe", "-p", "4", "-m", "16", "--png"],
    ["memory", "--model", "llama3-8b", "--seq", "1024", "--pp", "4", "-m", "8", "--trace"],
    ["search", "-p", "4", "-m", "64", "--plan-out"],
])
def test_a_failed_write_leaves_the_old_file_whole(tmp_path, args):
    out = tmp_path / "out"
    out.write_text("the old content\n")
    proc = subprocess.run([sys.executable, "-m", "course", *args, str(out)], capture_output=True, text=True,
                          timeout=120, preexec_fn=_file_size_limit)   # a disk that fills up after 2000 bytes
    one_line_error(proc.returncode, proc.stdout, proc.stderr, f"cannot write {out}: File too large")
    assert out.read_text() == "the old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]              # no temporary file left beside it
    proc = subprocess.run([sys.executable, "-m", "course", *args, str(out)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stderr == f"wrote {out}\n" and out.read_bytes() != b"the old content\n"


def test_a_device_is_written_in_place_never_replaced():
    code, _, err = run("sim", "gpipe", "-p", "2", "-m", "2", "--trace", "/dev/full")
    assert code == 2 and "No space left on device" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_write_file_keeps_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    from course import files

    target = tmp_path / "keep.txt"
    target.write_text("old")
    os.chmod(target, 0o640)

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError) as caught:
        files.write_file(target, "new")
    assert caught.value.filename == str(target) and target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    monkeypatch.undo()
    files.write_file(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_json_stays_one_document_when_files_are_written(tmp_path):
    trace, plan = tmp_path / "t.json", tmp_path / "best.plan"
    for args, path in ((["sim", "1f1b", "-p", "2", "-m", "4", "--json", "--trace", str(trace)], trace),
                       (["search", "-p", "2", "-m", "4", "--json", "--plan-out", str(plan)], plan)):
        code, out, err = run(*args)
        assert code == 0 and err == f"wrote {path}\n", err
        json.loads(out)
