from course.checks import CheckFailed, assert_not_using, assert_true
from course.memory import GB, fit_layouts, preset

from submission import choose_layout

MARGIN = 1.10
KEYS = ("tp", "pp", "dp", "schedule", "v", "m", "recompute")


def check(name, gpus, gpu_gb, global_batch, seq):
    model = preset(name)
    shape = {"layers": model.layers, "hidden": model.hidden, "heads": model.heads, "kv_heads": model.kv_heads,
             "ffn": model.ffn, "vocab": model.vocab}
    rows = fit_layouts(model, gpus, gpu_gb * GB, global_batch, seq)
    what = f"{name} on {gpus} x {gpu_gb} GB, global batch {global_batch} x {seq}"
    got = choose_layout(shape, gpus, gpu_gb * GB, global_batch, seq)
    if type(got) is not dict or any(k not in got for k in KEYS):
        raise CheckFailed(f"{what}: 要返回一个包含 {', '.join(KEYS)} 的 dict")
    mine = [r for r in rows if all(r[k] == got[k] for k in KEYS)]
    if not mine:
        raise CheckFailed(f"{what}: 方案 {got!r} 放不下（或者不满足 tp × pp × dp = gpus、dp × m = global batch）")
    best = rows[0]
    assert_true(mine[0]["step_s"] <= MARGIN * best["step_s"] * (1 + 1e-9),
                f"{what}: 你的方案一次迭代 {mine[0]['step_s']:.3f} s，最快的放得下的方案 "
                f"({best['tp']}x{best['pp']}x{best['dp']} {best['schedule']}, recompute {best['recompute']}) 是 "
                f"{best['step_s']:.3f} s，超过了 {MARGIN} 倍")


def test_llama3_8b_one_node():
    check("llama3-8b", 8, 80, 16, 4096)


def test_llama3_8b_small_gpus():
    check("llama3-8b", 16, 24, 32, 4096)


def test_llama3_70b_four_nodes():
    check("llama3-70b", 32, 80, 32, 4096)
    assert_not_using(choose_layout, "course.cli", names=("fit_layouts", "candidate_layouts"))
