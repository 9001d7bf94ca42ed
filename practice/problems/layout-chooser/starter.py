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
    raise NotImplementedError  # TODO: your code here
