"""`python -m course memory`: the JSON the issue names, the GB table, --gpu-mem marks, --fit, one-line errors."""

import json
import subprocess
import sys

import pytest

from course.cli import main
from course.memory import PRESETS, ActivationConfig, layer_activation_bytes

ISSUE = ["memory", "--model", "gpt3-175b", "--seq", "2048", "--mbs", "1", "--tp", "8", "--sp", "--recompute",
         "selective", "--pp", "8", "--schedule", "1f1b", "-m", "64"]


def test_issue_example_json(capsys):
    assert main(ISSUE + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    per_layer = layer_activation_bytes(PRESETS["gpt3-175b"], ActivationConfig(2048, 1, 8, True, "selective"))
    assert out["activation_bytes_per_layer"] == per_layer == 34 * 2048 * 12288 // 8
    assert len(out["ranks"]) == 8
    for r in out["ranks"]:
        assert set(r) >= {"weights", "grads", "optimizer", "activations", "total"}
        assert r["total"] == r["weights"] + r["grads"] + r["optimizer"] + r["activations"]
        assert r["optimizer"] == 6 * r["weights"]          # 12 bytes of Adam state per 2 bytes of weight
    # rank 0 of 1F1B: 8 in flight x 12 layers = one model's layers, plus 8 embedding dropout masks (sbh/t each)
    assert out["ranks"][0]["activations"] == 96 * per_layer + 8 * 2048 * 12288 // 8


def test_trace_carries_each_ranks_bytes(tmp_path, capsys):
    path = tmp_path / "mem.json"
    assert main(ISSUE[:-2] + ["-m", "16", "--json", "--trace", str(path)]) == 0
    ranks = json.loads(capsys.readouterr().out)["ranks"]
    counters = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "C"]
    for r in ranks:
        assert max(e["args"]["bytes"] for e in counters if e["pid"] == r["rank"]) == r["total"]


def test_table_in_gb_marks_what_does_not_fit(capsys):
    assert main(["memory", "--model", "llama3-70b", "--seq", "8192", "--tp", "8", "--sp", "--pp", "4", "-m", "8",
                 "--gpu-mem", "80GB"]) == 0
    out = capsys.readouterr().out
    assert "(GB)" in out and "DOES NOT FIT" in out
    assert main(["memory", "--model", "llama3-70b", "--seq", "8192", "--tp", "8", "--sp", "--pp", "4", "-m", "8",
                 "--recompute", "full", "--gpu-mem", "80GB"]) == 0
    assert "DOES NOT FIT" not in capsys.readouterr().out


def test_shape_flags_dp_and_zero(capsys):
    base = ["memory", "--layers", "8", "--hidden", "1024", "--heads", "16", "--vocab", "32000", "--seq", "1024",
            "--pp", "2", "--dp", "4", "--json"]
    assert main(base) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(base + ["--zero", "1"]) == 0
    zero = json.loads(capsys.readouterr().out)
    assert plain["ranks"][0]["optimizer"] == 4 * zero["ranks"][0]["optimizer"]
    assert plain["ranks"][0]["weights"] == zero["ranks"][0]["weights"]
    # the default block of a shape without GQA is Korthikanti's: 34sbh + 5as^2b
    assert plain["activation_bytes_per_layer"] == 1024 * 1024 * (34 + 5 * 16 * 1024 / 1024)


def test_fit_lists_layouts_that_fit_best_first(capsys):
    assert main(["memory", "--fit", "--model", "llama3-8b", "--seq", "4096", "--gpus", "8", "--gpu-mem", "40GB",
                 "--global-batch", "16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["fits"]
    assert rows and out["layouts"] >= len(rows)
    assert all(r["peak_bytes"] <= 40e9 and r["tp"] * r["pp"] * r["dp"] == 8 for r in rows)
    assert all(r["dp"] * r["m"] == 16 for r in rows)
    assert [r["step_s"] for r in rows] == sorted(r["step_s"] for r in rows)
    assert main(["memory", "--fit", "--model", "llama3-8b", "--seq", "4096", "--gpus", "8", "--gpu-mem", "40GB",
                 "--global-batch", "16"]) == 0
    text = capsys.readouterr().out
    assert "layouts fit" in text and "peak GB" in text and "bubble" in text
    assert "TP traffic not modelled" in text


def test_fit_with_bandwidths_adds_communication(capsys):
    flags = ["memory", "--fit", "--model", "llama3-8b", "--seq", "4096", "--gpus", "8", "--gpu-mem", "40GB",
             "--global-batch", "16", "--json"]
    assert main(flags) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(flags + ["--tp-bw", "300", "--dp-bw", "40", "--top", "200"]) == 0
    comm = json.loads(capsys.readouterr().out)
    assert (comm["tp_bw_gb_s"], comm["dp_bw_gb_s"]) == (300, 40) and comm["layouts"] == plain["layouts"]
    assert comm["fits"][0]["step_s"] > plain["fits"][0]["step_s"]
    assert all((r["dp_s"] > 0) == (r["dp"] > 1) for r in comm["fits"]) and len(comm["fits"]) == comm["layouts"]
    assert main(flags[:-1] + ["--tp-bw", "300"]) == 0
    assert "TP at 300 GB/s" in capsys.readouterr().out


def test_flash_attention_flag(capsys):
    base = ["memory", "--model", "llama3-8b", "--seq", "8192", "--pp", "4", "--schedule", "zbv", "-m", "8", "--json"]
    assert main(base) == 0
    eager = json.loads(capsys.readouterr().out)
    assert main(base + ["--flash-attention"]) == 0
    flash = json.loads(capsys.readouterr().out)
    assert (eager["flash_attention"], flash["flash_attention"]) == (False, True)
    cfg = ActivationConfig(8192, 1, flash=True)
    assert flash["activation_bytes_per_layer"] == layer_activation_bytes(PRESETS["llama3-8b"], cfg)
    assert max(r["total"] for r in eager["ranks"]) > 200e9 > 100e9 > max(r["total"] for r in flash["ranks"])
    assert [r["weights"] for r in eager["ranks"]] == [r["weights"] for r in flash["ranks"]]


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "course", "memory", *args], capture_output=True, text=True,
                          timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--seq", "2048"], "give --model PRESET or the shape"),
    (["--model", "gpt9", "--seq", "2048"], "unknown model 'gpt9'"),
    (["--model", "gpt3-175b", "--seq", "2048", "--tp", "5"], "tp=5 must divide heads"),
    (["--model", "gpt3-175b", "--seq", "2048", "--sp"], "sequence parallelism needs"),
    (["--model", "gpt3-175b", "--seq", "0"], "expected a positive integer"),
    (["--model", "gpt3-175b", "--seq", "2048", "--gpu-mem", "lots"], "expected a positive memory size"),
    (["--model", "gpt3-175b", "--seq", "2048", "--fit"], "--fit needs --gpus"),
    (["--model", "gpt3-175b", "--seq", "2048", "--fit", "--dp-bw", "0"], "expected a positive number"),
    (["--model", "gpt3-175b", "--seq", "2048", "--zero", "1"], "--zero 1 shards optimizer states"),
    (["--model", "gpt3-175b", "--seq", "2048", "--pp", "4", "--schedule", "nope"], "unknown schedule 'nope'"),
    (["--model", "llama3-8b", "--seq", "99999999999999999999"], "beyond the 2**63-byte limit"),
    (["--layers", "1000000", "--hidden", "600000", "--heads", "1", "--vocab", "10", "--seq", "1"],   # 4.3e18 params
     "beyond the 2**63-byte limit"),
    (["--layers", "1000000", "--hidden", "600000", "--heads", "1", "--vocab", "10", "--seq", "1", "--fit",
      "--gpus", "8", "--gpu-mem", "80GB", "--global-batch", "8"], "beyond the 2**63-byte limit"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
