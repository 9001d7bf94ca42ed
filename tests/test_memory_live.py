"""Measured, not only modelled: the bytes the live runtime's autograd saves, against course.memory and the simulator.

The formula tests run in this process; the live ones start small gloo jobs (p=2 or 4), a handful in all.
"""

import json

import pytest
import torch

from course.live.model import GPTLayer, activation_bytes, make_chunk
from course.live.options import ModelConfig
from course.live.saved import SavedBytes
from course.memory import Model, eager_layer_terms

GPT = ModelConfig(kind="gpt", width=8, heads=2, seq=4, vocab=16, blocks_per_stage=1, microbatch_size=2)


def saved_by_forward(module, x, target=None):
    meter = SavedBytes(module.parameters())
    with meter.hooks():
        y = module(x)
        if target is not None:
            y = torch.nn.functional.cross_entropy(y, target.reshape(-1))
    return meter.level, y


def test_one_gpt_layer_saves_exactly_the_eager_terms():
    cfg = ModelConfig(kind="gpt", width=16, heads=4, seq=8, microbatch_size=3)
    layer = GPTLayer(cfg, 0)
    x = torch.randn(cfg.microbatch_size * cfg.seq, cfg.width, dtype=torch.float64, requires_grad=True)
    measured, _ = saved_by_forward(layer, x)
    shape = Model("t", 1, cfg.width, cfg.heads, cfg.heads, 4 * cfg.width, cfg.vocab, block="gpt")
    terms = eager_layer_terms(shape, cfg.seq, cfg.microbatch_size, 8)
    T, h = cfg.microbatch_size * cfg.seq, cfg.width
    assert measured == sum(t.size for t in terms) == 8 * (8 * T * h + 2 * T * 4 * h + cfg.heads * cfg.seq ** 2
                                                           * cfg.microbatch_size + 4 * T)


def test_chunks_with_embedding_and_head_save_what_activation_bytes_says():
    chunks = 3
    predicted = activation_bytes(GPT, chunks)
    T = GPT.microbatch_size * GPT.seq
    ids = torch.randint(0, GPT.vocab, (GPT.microbatch_size, GPT.seq))
    hidden = torch.randn(T, GPT.width, dtype=torch.float64, requires_grad=True)
    assert saved_by_forward(make_chunk(0, chunks, GPT), ids)[0] == predicted[0]
    assert saved_by_forward(make_chunk(1, chunks, GPT), hidden)[0] == predicted[1]
    assert saved_by_forward(make_chunk(2, chunks, GPT), hidden, ids)[0] == predicted[2]


def test_saved_bytes_count_a_storage_once_and_drop_it_with_the_graph():
    cfg = ModelConfig(microbatch_size=2)
    chunk = make_chunk(0, 1, cfg)
    meter = SavedBytes(chunk.parameters())
    x = torch.randn(2, cfg.width, dtype=torch.float64)
    with meter.hooks():
        y = chunk(x)       # tanh saves its output, the next Linear saves the same storage as its input
    assert meter.level == meter.peak == activation_bytes(cfg, 2)[0]   # input + one output per block
    y.sum().backward()
    assert meter.level == 0 and not meter.live


@pytest.mark.live
def test_cli_json_reports_measured_and_simulated_peaks_and_a_trace(tmp_path, capsys):
    from course.cli import main

    path = tmp_path / "live.json"
    assert main(["live", "1f1b", "-p", "4", "-m", "8", "--json", "--trace", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    measured, simulated = out["measured_peak_activation_bytes"], out["simulated_peak_activation_bytes"]
    assert len(measured) == len(simulated) == 4
    assert all(abs(a / b - 1) <= 0.05 for a, b in zip(measured, simulated))
    assert simulated == [(4 - r) * activation_bytes(ModelConfig(), 4)[0] for r in range(3)] + [
        activation_bytes(ModelConfig(), 4)[3]]             # 1F1B: rank r holds p - r micro-batches
    events = json.loads(path.read_text())["traceEvents"]
    assert len([e for e in events if e["ph"] == "X"]) == 4 * 16
    for r in range(4):
        levels = [e["args"]["bytes"] for e in events if e["ph"] == "C" and e["pid"] == r]
        assert max(levels) == measured[r] and levels[-1] == 0


@pytest.mark.live
@pytest.mark.timeout(600)
def test_gpt_every_schedule_gradients_and_bytes_match_the_simulator():
    from course.live import run_plan
    from course.schedules import REGISTRY, build

    ratios = {}
    for name, info in REGISTRY.items():
        plan = build(name, 2, 4, **({"v": 2} if "v" in info.params else {}))
        res = run_plan(plan, width=GPT.width, heads=GPT.heads, seq=GPT.seq, vocab=GPT.vocab,
                       blocks_per_stage=GPT.blocks_per_stage, microbatch_size=GPT.microbatch_size, kind="gpt",
                       emulate=name == "zb-h1", unit_ms=5)
        assert res.grad_ok, (name, res.max_abs_err)
        measured = res.meta["measured_peak_activation_bytes"]
        simulated = res.meta["simulated_peak_activation_bytes"]
        ratios[name] = [a / b for a, b in zip(measured, simulated)]
    assert all(abs(x - 1) <= 0.05 for rs in ratios.values() for x in rs), ratios
