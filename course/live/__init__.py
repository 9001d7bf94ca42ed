"""The live runtime: run a Plan on real gloo (or NCCL) processes, check gradients, measure the timeline.

    from course.live import run_plan
    res = run_plan(build("1f1b", 4, 8), emulate=True)   # -> LiveResult(grad_ok, max_abs_err, timeline, ...)

Modules: ``launcher`` (start/watch/kill P workers), ``worker`` (worker side, torchrun entry), ``executor`` (one
rank's share of a plan), ``model`` (reference model and gradients), ``runner`` (run_plan), ``torch_engine``
(the same model through torch.distributed.pipelining).  torch is imported only when this package is.
"""

from .launcher import DeadlockDetected, JobTimeout, LiveError, WorkerError, launch, stray_workers
from .runner import LiveResult, run_plan, step_durations

__all__ = ["run_plan", "LiveResult", "launch", "LiveError", "WorkerError", "JobTimeout", "DeadlockDetected",
           "step_durations", "stray_workers"]
