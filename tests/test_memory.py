"""course.memory: Korthikanti's per-layer bytes, presets' parameter counts, per-rank bytes over every schedule."""

import pytest

from course.costs import Costs
from course.memory import (
    PRESETS,
    ActivationConfig,
    Model,
    chunk_activation_bytes,
    chunk_times,
    dp_bytes,
    fit_layouts,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    layer_terms,
    output_activation_bytes,
    pipeline_memory,
    pp_transfer_bytes,
    preset,
    rank_params,
    ring_share,
    static_bytes,
    step_traffic,
    tp_layer_bytes,
    w_mem_share,
)
from course.schedules import REGISTRY, build
from course.sim import simulate

GPT3 = PRESETS["gpt3-175b"]
SBH = 2048 * 1 * 12288          # s b h for GPT-3 175B at s=2048, b=1


@pytest.mark.parametrize("tp, sp, recompute, sbh_units", [
    (1, False, "none", 34 + 5 * 96 * 2048 / 12288),          # sbh(34 + 5as/h) = 114 sbh
    (8, False, "none", 10 + 24 / 8 + 5 * 96 * 2048 / (12288 * 8)),   # sbh(10 + 24/t + 5as/(ht)) = 23 sbh
    (8, True, "none", (34 + 5 * 96 * 2048 / 12288) / 8),      # sbh/t (34 + 5as/h) = 14.25 sbh
    (8, True, "selective", 34 / 8),                           # 34 sbh / t
    (8, False, "selective", 10 + 24 / 8),                     # sbh(10 + 24/t)
    (8, False, "full", 2),                                    # 2 sbh
])
def test_gpt3_175b_reproduces_korthikanti_exactly(tp, sp, recompute, sbh_units):
    cfg = ActivationConfig(seq=2048, mbs=1, tp=tp, sp=sp, recompute=recompute)
    expected = round(sbh_units * SBH)
    assert layer_activation_bytes(GPT3, cfg) == expected
    assert korthikanti_layer_bytes(2048, 1, 12288, 96, tp, sp, recompute) == expected


def test_gpt3_figures_by_hand():
    # 114 x 25,165,824 and the rest written out, so the formulas cannot drift together with the code
    figures = {(1, False, "none"): 2_868_903_936, (8, False, "none"): 578_813_952,
               (8, True, "none"): 358_612_992, (8, True, "selective"): 106_954_752, (8, False, "full"): 50_331_648}
    for (tp, sp, rc), expected in figures.items():
        assert layer_activation_bytes(GPT3, ActivationConfig(2048, 1, tp, sp, rc)) == expected


def test_llama_block_terms():
    m = PRESETS["llama3-8b"]
    s, h, f, g, a = 4096, 4096, 14336, 1024, 32
    terms = layer_terms(m, s, 1, 2)
    assert sum(t.size for t in terms) == 2 * s * (6 * h + 2 * g + 4 * f) + 2 * a * s * s
    assert not any("dropout" in t.what for t in terms)
    sel = layer_activation_bytes(m, ActivationConfig(s, 1, 1, False, "selective"))
    assert sel == 2 * s * (6 * h + 2 * g + 4 * f)
    # fp32 activations double every tensor of a block without masks
    assert layer_activation_bytes(m, ActivationConfig(s, 1, dtype_bytes=4)) == 2 * layer_activation_bytes(
        m, ActivationConfig(s, 1))


@pytest.mark.parametrize("name, published", [("gpt3-175b", 175e9), ("llama3-8b", 8.0e9), ("llama3-70b", 70.6e9),
                                             ("llama3-405b", 405e9)])
def test_preset_parameter_counts_within_one_percent(name, published):
    assert abs(PRESETS[name].params() - published) / published < 0.01


def test_one_f_one_b_rank0_peak_is_one_model_of_activations():
    cfg = ActivationConfig(2048, 1, 8, True, "selective")
    per_layer = layer_activation_bytes(GPT3, cfg)
    for p, m in ((4, 4), (8, 8), (8, 32), (4, 13)):
        pm = pipeline_memory(build("1f1b", p, m), GPT3, cfg, extras=False)
        assert pm.ranks[0].activations == GPT3.layers * per_layer
        assert [r.activations for r in pm.ranks] == [(p - r) * GPT3.layers // p * per_layer for r in range(p)]
    # with the extras, rank 0 also holds p embedding outputs
    pm = pipeline_memory(build("1f1b", 8, 16), GPT3, cfg)
    assert pm.ranks[0].activations == GPT3.layers * per_layer + 8 * 2048 * 12288 // 8
    assert pm.ranks[-1].activations == 12 * per_layer + output_activation_bytes(GPT3, cfg)


def test_gpipe_holds_m_micro_batches():
    cfg = ActivationConfig(2048, 1, 8, True, "none")
    pm = pipeline_memory(build("gpipe", 4, 6), GPT3, cfg, extras=False)
    assert all(r.activations == 6 * 24 * layer_activation_bytes(GPT3, cfg) for r in pm.ranks)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_schedule_in_bytes_matches_its_unit_simulation(name):
    """Bytes over time = static + the unit simulation scaled by one chunk's bytes (equal chunks, no extras)."""
    info = REGISTRY[name]
    kw = {"v": 2} if "v" in info.params else {}
    plan = build(name, 4, 8, **kw)
    model = Model("toy", plan.chunks * 2, 256, 4, 4, 1024, 1000, block="gpt")
    cfg = ActivationConfig(128, 2)
    pm = pipeline_memory(plan, model, cfg, extras=False)
    unit = simulate(plan, Costs(act=1.0))                 # act=1: one rank's share is 1, a chunk p/chunks
    chunk = chunk_activation_bytes(model, cfg, plan.chunks, extras=False)[0]
    scale = chunk * plan.chunks / plan.p
    assert [r.activations for r in pm.ranks] == [round(x * scale) for x in unit.peak_activations]
    curves = pm.curves()
    for r, rank in enumerate(pm.ranks):
        assert max(b for _, b in curves[r]) == rank.total
        assert curves[r][-1][1] == rank.static        # every activation freed by the end
        assert min(b for _, b in curves[r]) >= rank.static


def test_v_shapes_put_embedding_and_head_on_rank0_and_dualpipe_doubles_parameters():
    model = PRESETS["llama3-8b"]
    p = 4
    plain = rank_params(build("1f1b", p, 8), model)
    v = rank_params(build("zbv", p, 8), model)
    dual = rank_params(build("dualpipe", p, 8), model)
    emb = model.vocab * model.hidden
    assert plain[0] - plain[1] == emb and plain[-1] - plain[1] == emb + model.hidden
    assert v[0] - v[1] == 2 * emb + model.hidden        # chunk 0 and the last chunk both live on rank 0
    assert sum(plain) == model.params()
    assert sum(dual) == 2 * model.params()              # DualPipe keeps two copies of every stage
    assert dual[0] == dual[-1] == plain[0] + plain[-1]


def test_tied_embedding_on_one_rank_is_held_once():
    assert rank_params(build("1f1b", 1, 2), GPT3) == [GPT3.params()]
    assert sum(rank_params(build("1f1b", 4, 4), GPT3)) == GPT3.params() + GPT3.vocab * GPT3.hidden


def test_static_bytes_mixed_precision_adam_and_zero1():
    assert static_bytes(1000) == (2000, 2000, 12000)
    assert static_bytes(1000, dp=8, zero=1) == (2000, 2000, 1500)
    with pytest.raises(ValueError, match="zero must be 0"):
        static_bytes(10, zero=3)


def test_split_backward_share_is_zero_bubble_m_w_over_m_b():
    cfg = ActivationConfig(2048, 1)
    m_b = layer_activation_bytes(GPT3, cfg)
    assert m_b == SBH * (34 + 5 * 96 * 2048 // 12288)
    assert round(w_mem_share(GPT3, cfg) * m_b) == 32 * SBH          # M_W = 32sbh (Qi et al., Zero Bubble)


def test_split_backward_share_holds_between_b_and_w():
    cfg = ActivationConfig(2048, 1, 8, True, "selective")
    share = w_mem_share(GPT3, cfg)
    assert 0 < share < 1
    plan = build("zb-h1", 4, 8)
    full = pipeline_memory(plan, GPT3, cfg, extras=False)
    part = pipeline_memory(plan, GPT3, cfg, Costs(w_mem=share), extras=False)
    assert all(a.activations >= b.activations for a, b in zip(full.ranks, part.ranks))
    assert part.ranks[-1].activations < full.ranks[-1].activations


def test_bad_shapes_are_rejected_with_a_reason():
    with pytest.raises(ValueError, match="hidden 100 must be a multiple of heads 3"):
        Model("x", 2, 100, 3, 3, 400, 10)
    with pytest.raises(ValueError, match="tp=5 must divide heads"):
        layer_activation_bytes(GPT3, ActivationConfig(2048, 1, 5))
    with pytest.raises(ValueError, match="unknown recompute"):
        ActivationConfig(2048, recompute="some")
    with pytest.raises(ValueError, match="sequence parallelism needs"):
        ActivationConfig(2048, sp=True)
    with pytest.raises(ValueError, match="unknown model"):
        preset("gpt5")


def test_fit_layouts_keep_what_fits_fastest_first():
    model = PRESETS["llama3-70b"]
    rows = fit_layouts(model, gpus=16, gpu_mem=80e9, global_batch=16, seq=4096, zero=1)
    assert rows
    keys = {(r["tp"], r["pp"], r["dp"], r["schedule"], r["v"], r["recompute"]) for r in rows}
    for r in rows:
        assert r["tp"] * r["pp"] * r["dp"] == 16 and r["dp"] * r["m"] == 16 and r["peak_bytes"] <= 80e9
        cfg = ActivationConfig(4096, 1, r["tp"], r["tp"] > 1, r["recompute"])
        plan = build(r["schedule"], r["pp"], r["m"], v=r["v"])
        assert max(pipeline_memory(plan, model, cfg, dp=r["dp"], zero=1).peak) == r["peak_bytes"]
    assert [r["step_s"] for r in rows] == sorted(r["step_s"] for r in rows)
    # 16 GPUs hold 70B's 1.1 TB of training state only with dp = 1, and then only with full recomputation
    assert {k[2] for k in keys} == {1} and {k[5] for k in keys} == {"full"}
    assert not fit_layouts(model, gpus=8, gpu_mem=80e9, global_batch=16, seq=4096)   # 8 x 80 GB < 16 B x 70.6 B


def test_traffic_bytes_by_hand():
    """Megatron's TP: 2 all-reduces of s·b·h per layer forward, 2 backward, ring 2(t-1)/t; PP: s·b·h/t per
    transfer; DP: one ring all-reduce of 2-byte gradients."""
    cfg = ActivationConfig(seq=2048, mbs=1, tp=8, sp=True, recompute="selective")
    assert ring_share(1) == 0 and ring_share(8) == 1.75
    assert tp_layer_bytes(GPT3, cfg) == (2 * 1.75 * 2 * SBH, 2 * 1.75 * 2 * SBH)
    full = ActivationConfig(seq=2048, mbs=1, tp=8, sp=True, recompute="full")
    assert tp_layer_bytes(GPT3, full) == (2 * 1.75 * 2 * SBH, 4 * 1.75 * 2 * SBH)   # the recomputed forward's two
    assert tp_layer_bytes(GPT3, ActivationConfig(seq=2048)) == (0, 0)
    assert pp_transfer_bytes(GPT3, cfg) == 2 * SBH / 8
    assert dp_bytes(10 ** 9, 4) == 1.5 * 2 * 10 ** 9 and dp_bytes(10 ** 9, 1) == 0


@pytest.mark.parametrize("name, v, sends", [
    ("1f1b", None, [1, 2, 2, 1]),            # transfers per micro-batch: the ends send one way, the middle both
    ("interleaved", 2, [3, 4, 4, 3]),        # rank 0: F of stages 0 and 4, B of stage 4; rank 3 likewise
    ("zbv", None, [2, 4, 4, 2]),             # V shape: rank 0's stages 0 and 7 each send once; rank 3 turns on itself
])
def test_step_traffic_counts_every_boundary(name, v, sends):
    model, m = PRESETS["llama3-8b"], 8
    cfg = ActivationConfig(seq=4096, mbs=1, tp=2, sp=True)
    plan = build(name, 4, m, v=v) if v else build(name, 4, m)
    traffic = step_traffic(plan, model, cfg, dp=4)
    assert [round(t["pp"] / pp_transfer_bytes(model, cfg)) for t in traffic] == [n * m for n in sends]
    fwd, bwd = tp_layer_bytes(model, cfg)
    layers = model.layers // 4          # each rank holds a quarter of the layers, however its chunks split them
    assert all(t["tp"] == pytest.approx(layers * m * (fwd + bwd)) for t in traffic)
    assert [t["dp"] for t in traffic] == [dp_bytes(n, 4) for n in rank_params(plan, model, 2)]


def test_fit_layouts_with_bandwidths_add_communication():
    model = PRESETS["llama3-8b"]
    fit = dict(gpus=8, gpu_mem=40e9, global_batch=16, seq=4096)
    plain, comm = fit_layouts(model, **fit), fit_layouts(model, **fit, tp_bw=300e9, dp_bw=40e9)

    def key(r):
        return r["tp"], r["pp"], r["dp"], r["schedule"], r["v"], r["recompute"]

    before = {key(r): r for r in plain}
    assert {key(r) for r in comm} == set(before)          # communication changes times, not what fits
    assert all(r["dp_s"] == 0 for r in plain)
    for r in comm:
        assert r["step_s"] > before[key(r)]["step_s"] or (r["tp"] == 1 and r["pp"] == 1 and r["dp"] == 1)
        cfg = ActivationConfig(4096, 1, r["tp"], r["tp"] > 1, r["recompute"])
        plan = build(r["schedule"], r["pp"], r["m"], v=r["v"])
        f, b, w = chunk_times(model, cfg, plan.chunks, 400e12, 300e9)
        tl = simulate(plan, Costs(f=f, b=b, w=w, comm=pp_transfer_bytes(model, cfg) / 40e9))
        assert r["step_s"] == pytest.approx(tl.makespan + r["dp_s"])
        assert r["dp_s"] == pytest.approx(dp_bytes(max(rank_params(plan, model, r["tp"])), r["dp"]) / 40e9)
    # compute alone puts tp = 8, pp = 1 first; its all-reduces in every layer cost it that place
    assert (plain[0]["tp"], plain[0]["pp"]) == (8, 1) and (comm[0]["tp"], comm[0]["pp"]) != (8, 1)
    with pytest.raises(ValueError, match="dp_bw"):
        fit_layouts(model, **fit, dp_bw=0)
    with pytest.raises(ValueError, match="tp_bw"):
        fit_layouts(model, **fit, tp_bw=-1.0)


# ---- flash attention (no s x s scores kept) ------------------------------------------------------------------
@pytest.mark.parametrize("tp, sp", [(1, False), (8, False), (8, True)])
def test_flash_attention_keeps_a_log_sum_exp_instead_of_the_scores(tp, sp):
    a, s = GPT3.heads, 2048
    lse = 4 * a * s // tp                      # fp32 per row and head, sharded over TP ranks like the heads
    flash = layer_activation_bytes(GPT3, ActivationConfig(s, 1, tp, sp, "none", flash=True))
    selective = layer_activation_bytes(GPT3, ActivationConfig(s, 1, tp, sp, "selective"))
    assert flash == selective + lse            # Korthikanti's 34sbh (/t with SP, 10 + 24/t without) + 4asb/t
    # recomputation works as without it: selective drops the core (the log-sum-exp), full keeps the layer input
    assert layer_activation_bytes(GPT3, ActivationConfig(s, 1, tp, sp, "selective", flash=True)) == selective
    full = ActivationConfig(s, 1, tp, sp, "full")
    assert layer_activation_bytes(GPT3, ActivationConfig(s, 1, tp, sp, "full", flash=True)) == \
        layer_activation_bytes(GPT3, full) == 2 * s * 12288 // (tp if sp else 1)
    # the default stays the paper's eager attention
    assert layer_activation_bytes(GPT3, ActivationConfig(s, 1, tp, sp)) == korthikanti_layer_bytes(
        s, 1, 12288, a, tp, sp)


def test_flash_attention_terms_have_no_quadratic_term():
    for model in (GPT3, PRESETS["llama3-8b"]):
        seq = 4096
        terms = layer_terms(model, seq, 1, 2, flash=True)
        assert [t.what for t in terms if t.core] == ["softmax log-sum-exp (fp32, flash attention)"]
        doubled = layer_terms(model, 2 * seq, 1, 2, flash=True)
        assert [2 * t.size for t in terms] == [t.size for t in doubled]   # every term linear in s
        eager = {t.what for t in layer_terms(model, seq, 1, 2) if not t.core}
        assert eager == {t.what for t in terms if not t.core}   # every other tensor is kept as before


def test_byte_counts_beyond_64_bits_are_refused():
    with pytest.raises(ValueError, match=r"2\*\*63-byte limit"):
        layer_activation_bytes(PRESETS["llama3-8b"], ActivationConfig(99999999999999999999, 1))
    huge = Model("huge", 1_000_000, 600_000, 1, 1, 2_400_000, 10)    # 4.3e18 parameters, 16 bytes each
    with pytest.raises(ValueError, match=r"2\*\*63-byte limit"):
        pipeline_memory(build("1f1b", 1, 1), huge, ActivationConfig(1, 1))
