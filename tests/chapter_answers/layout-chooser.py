"""Chapter 8's first fit table as an answer to layout-chooser: it must fail.

Chapter 8 §8.1, the code cell that prints the table of ``fit-intro`` / ``fit-head``, ranks layouts by computation
alone (F, B, W from ``course.memory.chunk_times``, TP and DP communication free).  A learner who rebuilds that
ranking with the library's parts (``fit_layouts`` itself is off limits) and ignores the bandwidths picks
tp = 8 without a pipeline, which communication makes more than 10 % slower than the best layout.
"""

from course.costs import Costs
from course.memory import ActivationConfig, Model, chunk_activation_bytes, chunk_times, pipeline_memory
from course.schedules import build
from course.sim import DeadlockError, simulate


def choose_layout(model, gpus, gpu_mem, global_batch, seq, tflops=400.0, tp_bw=None, dp_bw=None):
    shape = Model("choice", model["layers"], model["hidden"], model["heads"], model["kv_heads"], model["ffn"],
                  model["vocab"])
    best = None
    for tp in (1, 2, 4, 8):
        if gpus % tp or shape.heads % tp or shape.kv_heads % tp:
            continue
        for pp in range(1, gpus // tp + 1):
            if (gpus // tp) % pp or pp > shape.layers:
                continue
            dp = gpus // (tp * pp)
            if global_batch % dp:
                continue
            m = global_batch // dp
            for name, v in ([("1f1b", None)] if pp == 1 else
                            [("1f1b", None), ("zb-h1", None), ("zbv", None), ("dualpipev", None), ("interleaved", 2)]):
                try:
                    plan = build(name, pp, m, v=v) if v else build(name, pp, m)
                except ValueError:
                    continue
                if plan.chunks > shape.layers:
                    continue
                for recompute in ("none", "selective", "full"):
                    cfg = ActivationConfig(seq, 1, tp, tp > 1, recompute)
                    f, b, w = chunk_times(shape, cfg, plan.chunks, tflops * 1e12)
                    try:
                        tl = simulate(plan, Costs(f=f, b=b, w=w, act=chunk_activation_bytes(shape, cfg, plan.chunks)))
                    except DeadlockError:
                        continue
                    if max(pipeline_memory(plan, shape, cfg, dp=dp, timeline=tl).peak) > gpu_mem:
                        continue
                    if best is None or tl.makespan < best[0]:
                        best = (tl.makespan, {"tp": tp, "pp": pp, "dp": dp, "schedule": name, "v": v, "m": m,
                                              "recompute": recompute})
    if best is None:
        raise ValueError("no layout fits")
    return best[1]
