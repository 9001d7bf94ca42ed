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
    raise NotImplementedError  # TODO: your code here
