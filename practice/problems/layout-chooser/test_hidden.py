from course.checks import CheckFailed, assert_not_using, assert_true
from course.i18n import tr
from course.memory import GB, fit_layouts, preset

from submission import choose_layout

MARGIN = 1.10
KEYS = ("tp", "pp", "dp", "schedule", "v", "m", "recompute")
FAST, SLOW = (300e9, 40e9), (100e9, 25e9)      # (tp_bw, dp_bw): NVLink-class and a slower cluster


def check(name, gpus, gpu_gb, global_batch, seq, bandwidths=(None, None)):
    model = preset(name)
    shape = {"layers": model.layers, "hidden": model.hidden, "heads": model.heads, "kv_heads": model.kv_heads,
             "ffn": model.ffn, "vocab": model.vocab}
    tp_bw, dp_bw = bandwidths
    rows = fit_layouts(model, gpus, gpu_gb * GB, global_batch, seq, tp_bw=tp_bw, dp_bw=dp_bw)
    links = tr("通信不计", "communication free") if tp_bw is None else \
        tr(f"tp_bw {tp_bw / 1e9:g} GB/s、dp_bw {dp_bw / 1e9:g} GB/s",
           f"tp_bw {tp_bw / 1e9:g} GB/s, dp_bw {dp_bw / 1e9:g} GB/s")
    what = f"{name}, {gpus} x {gpu_gb} GB, global batch {global_batch} x {seq}, {links}"
    got = choose_layout(shape, gpus, gpu_gb * GB, global_batch, seq, tp_bw=tp_bw, dp_bw=dp_bw)
    if type(got) is not dict or any(k not in got for k in KEYS):
        raise CheckFailed(tr(f"{what}：要返回一个包含 {', '.join(KEYS)} 的 dict",
                             f"{what}: return a dict with {', '.join(KEYS)}"))
    mine = [r for r in rows if all(r[k] == got[k] for k in KEYS)]
    if not mine:
        raise CheckFailed(tr(f"{what}：方案 {got!r} 放不下（或者不满足 tp × pp × dp = gpus、dp × m = global batch）",
                             f"{what}: layout {got!r} does not fit (or breaks tp × pp × dp = gpus, dp × m = global "
                             "batch)"))
    best = rows[0]
    assert_true(mine[0]["step_s"] <= MARGIN * best["step_s"] * (1 + 1e-9),
                tr(f"{what}：你的方案一次迭代 {mine[0]['step_s']:.3f} s，最快的放得下的方案 "
                   f"({best['tp']}x{best['pp']}x{best['dp']} {best['schedule']}, recompute {best['recompute']}) 是 "
                   f"{best['step_s']:.3f} s，超过了 {MARGIN} 倍；通信算进来时，TP 的 all-reduce 和 DP 的同步各花多少？",
                   f"{what}: your layout takes {mine[0]['step_s']:.3f} s per step, the fastest that fits "
                   f"({best['tp']}x{best['pp']}x{best['dp']} {best['schedule']}, recompute {best['recompute']}) "
                   f"{best['step_s']:.3f} s: more than {MARGIN} times; with communication counted, what do TP's "
                   f"all-reduces and DP's sync cost?"))


def test_llama3_8b_one_node():
    check("llama3-8b", 8, 80, 16, 4096)


def test_llama3_8b_small_gpus():
    check("llama3-8b", 16, 24, 32, 4096)


def test_llama3_70b_four_nodes():
    check("llama3-70b", 32, 80, 32, 4096)
    assert_not_using(choose_layout, "course.cli", names=("fit_layouts", "candidate_layouts"))


def test_llama3_8b_one_node_with_communication():
    check("llama3-8b", 8, 80, 16, 4096, FAST)
    check("llama3-8b", 8, 80, 16, 4096, SLOW)


def test_llama3_8b_long_sequences_on_a_slow_cluster():
    check("llama3-8b", 16, 40, 64, 8192, (150e9, 25e9))


def test_llama3_70b_with_communication():
    check("llama3-70b", 32, 80, 32, 4096, FAST)
    assert_not_using(choose_layout, "course.cli", names=("fit_layouts", "candidate_layouts"))
