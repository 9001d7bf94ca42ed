"""The torch-runtime engine: torch's own ``_PipelineScheduleRuntime`` runs the plan as written.

The plan goes to torch as its CSV (``course.torch_bridge.to_csv``); ``_load_csv`` validates it and lowers it to
sends and receives, then every rank runs it on real ``PipelineStage``s of the reference model.  Any plan with one
route runs (DualPipe's two directions have no torch form).  Stages, timing, emulation and the measured result are
the torch engine's (torch_engine.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..plan import Plan
from ..torch_bridge import load_in_torch, to_csv
from .executor import select_device
from .model import loss_fn
from .options import LiveOptions
from .torch_engine import TorchJob, check_runs_in_torch, measured, run_steps, stages  # noqa: F401  (measured)

SCHEDULE = "_PipelineScheduleRuntime"


def job(plan: Plan, options: LiveOptions) -> TorchJob:
    check_runs_in_torch(plan, options)
    try:
        load_in_torch(plan)       # torch checks the order here, before any process starts
    except AssertionError as e:
        raise ValueError(f"torch's runtime refuses {plan.name}: {str(e).splitlines()[0]}") from None
    return TorchJob(plan, options, SCHEDULE, to_csv(plan))


def worker(rank: int, world_size: int, job: TorchJob) -> dict:
    """Launcher target: this rank's stages, torch's runtime loading the plan's CSV, the training steps."""
    import torch.fx.experimental.symbolic_shapes  # noqa: F401  (see executor.plan_worker)
    from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

    dev = select_device(job.options.device, rank)
    mine, clock = stages(rank, job, dev)
    runtime = _PipelineScheduleRuntime(mine, n_microbatches=job.plan.m, loss_fn=loss_fn)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.csv"
        path.write_text(job.csv)
        runtime._load_csv(str(path))
    return run_steps(runtime, mine, job, dev, clock)
