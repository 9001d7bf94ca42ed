"""Exercise layout-chooser (chapter 8): pick tp x pp x dp, schedule, m and recomputation for a model and a cluster."""

from course.costs import Costs
from course.memory import ActivationConfig, Model, chunk_activation_bytes, chunk_times, pipeline_memory
from course.schedules import build
from course.sim import DeadlockError, simulate


def choose_layout(model, gpus, gpu_mem, global_batch, seq, tflops=400.0):
    """The fastest layout that fits: {"tp", "pp", "dp", "schedule", "v", "m", "recompute"}.

    ``model``: {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab"}; ``gpu_mem`` bytes per GPU; one
    sequence per micro-batch; step time and memory as course.memory models them (SP on whenever tp > 1).
    Raises ValueError when nothing fits.
    """
    ### BEGIN SOLUTION
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
            # Without a pipeline there is nothing to schedule; with one, the schedules that trade memory for
            # bubble differently: 1F1B, ZB-H1 (same memory, less bubble), the V shapes (one copy, rank 0 both ends).
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
    ### END SOLUTION
