"""Exercise layout-chooser (chapter 8): pick tp x pp x dp, schedule, m and recomputation for a model and a cluster,
with or without communication in the step time."""

from course.costs import Costs
from course.memory import (
    ActivationConfig,
    Model,
    chunk_activation_bytes,
    chunk_times,
    dp_bytes,
    pipeline_memory,
    pp_transfer_bytes,
    rank_params,
)
from course.schedules import build
from course.sim import DeadlockError, simulate


def choose_layout(model, gpus, gpu_mem, global_batch, seq, tflops=400.0, tp_bw=None, dp_bw=None):
    """The fastest layout that fits: {"tp", "pp", "dp", "schedule", "v", "m", "recompute"}.

    ``model``: {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab"}; ``gpu_mem`` bytes per GPU; one
    sequence per micro-batch; step time and memory as course.memory models them (SP on whenever tp > 1), with
    TP traffic at ``tp_bw`` and PP and DP traffic at ``dp_bw`` bytes per second per GPU (None: free).
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
            # Without a pipeline there is nothing to schedule; with one, schedules that trade memory for bubble
            # differently: 1F1B, ZB-H1 (same memory, less bubble), the V shapes (one copy, rank 0 both ends) and
            # DualPipe (two copies, so its DP all-reduce covers twice the parameters).
            for name, v in ([("1f1b", None)] if pp == 1 else
                            [("1f1b", None), ("zb-h1", None), ("zbv", None), ("dualpipev", None), ("dualpipe", None),
                             ("interleaved", 2), ("interleaved", 4)]):
                try:
                    plan = build(name, pp, m, v=v) if v else build(name, pp, m)
                except ValueError:
                    continue
                if plan.chunks > shape.layers:
                    continue
                sync = dp_bytes(max(rank_params(plan, shape, tp)), dp) / dp_bw if dp_bw else 0.0
                for recompute in ("none", "selective", "full"):
                    cfg = ActivationConfig(seq, 1, tp, tp > 1, recompute)
                    f, b, w = chunk_times(shape, cfg, plan.chunks, tflops * 1e12, tp_bw)
                    comm = pp_transfer_bytes(shape, cfg) / dp_bw if dp_bw else 0.0
                    try:
                        tl = simulate(plan, Costs(f=f, b=b, w=w, comm=comm,
                                                  act=chunk_activation_bytes(shape, cfg, plan.chunks)))
                    except DeadlockError:
                        continue
                    if max(pipeline_memory(plan, shape, cfg, dp=dp, timeline=tl).peak) > gpu_mem:
                        continue
                    step = tl.makespan + sync
                    if best is None or step < best[0]:
                        best = (step, {"tp": tp, "pp": pp, "dp": dp, "schedule": name, "v": v, "m": m,
                                       "recompute": recompute})
    if best is None:
        raise ValueError("no layout fits")
    return best[1]
    ### END SOLUTION
