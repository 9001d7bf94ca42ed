"""The live runtime: run a Plan on real gloo (or NCCL) processes, check gradients, measure the timeline.

    from course.live import run_plan
    res = run_plan(build("1f1b", 4, 8), emulate=True)   # -> LiveResult(grad_ok, max_abs_err, timeline, ...)

Modules, from the bottom up: ``options`` (LiveOptions, ModelConfig and their flags; no torch), ``worker`` (worker
side, torchrun entry), ``launcher`` (start/watch/kill P workers), ``model`` (reference model and gradients),
``emulation`` (padding, message time stamps), ``transport`` (send, recv, post, drain), ``executor`` (one rank
interprets its share of the lowered plan, course/lower.py), ``engine`` (what an engine provides), the engines
``course_engine``, ``torch_engine`` and ``torch_runtime``, ``result`` (LiveResult; torch-free, so a recorded run
rebuilds it) and ``runner`` (run_plan).  The names below load their
module on first use, so reading the options does not import torch.
"""

from importlib import import_module

_HOME = {"run_plan": "runner", "LiveResult": "result", "LiveOptions": "options", "ModelConfig": "options",
         "launch": "launcher", "stray_workers": "launcher", "LiveError": "launcher", "WorkerError": "launcher",
         "JobTimeout": "launcher", "DeadlockDetected": "launcher", "WorkerStopped": "launcher"}

__all__ = list(_HOME)


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
