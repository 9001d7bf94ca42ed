"""The torch engine: the same model and batch through torch.distributed.pipelining's schedule classes.

A course schedule runs as the torch class with the same idea (``course.torch_bridge.TORCH_SCHEDULES``):

    gpipe -> ScheduleGPipe            1f1b -> Schedule1F1B            interleaved -> ScheduleInterleaved1F1B
    zb-h1 -> ScheduleInterleavedZeroBubble   zbv -> ScheduleZBVZeroBubble   dualpipev -> ScheduleDualPipeV

Rank r builds a torch ``PipelineStage`` for every stage in ``plan.placement[r]`` (the job checks that torch's class
places them the same way).  torch orders the ops itself; the order it ran, recorded per rank, becomes a course Plan,
so the measured spans, the simulator and the plots all speak about the same thing.  Spans are timed by wrapping the
stages' forward/backward/weight methods; with ``emulate`` each is padded to its modelled duration
(``Costs.step_duration``) like the course engine does.  ``stages``, ``run_steps`` and ``measured`` also serve
torch_runtime.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..plan import Op, Plan
from ..timeline import Span
from ..torch_bridge import TORCH_SCHEDULES, torch_plan
from .engine import Measured, iteration_times
from .executor import select_device
from .model import Chunk, loss_fn, make_batch
from .options import LiveOptions
from .worker import RUNNING, SLEEPING, set_status

COURSE_TO_TORCH = {course: cls for cls, (course, _) in TORCH_SCHEDULES.items()}


@dataclass(frozen=True)
class TorchJob:
    plan: Plan
    options: LiveOptions
    schedule: str        # the torch class that runs it
    csv: str = ""        # torch_runtime: the plan in torch's CSV form


def check_runs_in_torch(plan: Plan, options: LiveOptions) -> None:
    """What every torch engine needs: one route (torch's stage index is the position along it) and a backend
    that can carry the stages' tensors."""
    routes = len(set(map(tuple, plan.routes)))
    if routes > 1:
        raise ValueError(f"{plan.name} sends micro-batches along {routes} different routes; torch "
                         "runs every micro-batch through stages 0..S-1 (run dualpipev instead of dualpipe)")
    if options.device == "cuda" and options.backend == "gloo" and plan.p > 1:
        raise ValueError("the torch engines send GPU tensors directly, which gloo cannot: use --backend nccl with "
                         "--device cuda (one GPU per rank)")


def job(plan: Plan, options: LiveOptions) -> TorchJob:
    """The torch schedule class of ``plan``'s schedule, checked against the plan's placement."""
    cls = COURSE_TO_TORCH.get(plan.name)
    if cls is None:
        raise ValueError(f"--engine torch has no counterpart for schedule {plan.name!r}; it runs: "
                         f"{', '.join(COURSE_TO_TORCH)} (--engine torch-runtime runs any plan with one route)")
    check_runs_in_torch(plan, options)
    try:
        theirs = torch_plan(cls, plan.p, plan.m, v=len(plan.placement[0])).placement
    except Exception as e:  # noqa: BLE001  (torch's own argument checks: ValueError, AssertionError, ...)
        raise ValueError(f"torch's {cls} refuses p={plan.p} m={plan.m}: {str(e).splitlines()[0]}") from None
    if tuple(map(tuple, theirs)) != tuple(map(tuple, plan.placement)):
        raise ValueError(f"{plan.name} places stages {[list(s) for s in plan.placement]} on its ranks, torch's {cls} "
                         f"places {[list(s) for s in theirs]}")
    return TorchJob(plan, options, cls)


def worker(rank: int, world_size: int, job: TorchJob) -> dict:
    """Launcher target: this rank's PipelineStage(s) under torch's schedule class; spans and gradients back."""
    import torch.fx.experimental.symbolic_shapes  # noqa: F401  (see executor.plan_worker)
    from torch.distributed import pipelining as pp
    from torch.distributed.pipelining.schedules import PipelineScheduleSingle

    dev = select_device(job.options.device, rank)
    mine, clock = stages(rank, job, dev)
    cls = getattr(pp, job.schedule)
    sched = cls(mine[0] if issubclass(cls, PipelineScheduleSingle) else mine, n_microbatches=job.plan.m,
                loss_fn=loss_fn)
    return run_steps(sched, mine, job, dev, clock)


# ---- shared with torch_runtime ------------------------------------------------------------------------------
class Clock:
    """Times every forward/backward/weight call of this rank's stages, padded to its modelled duration when
    emulating.  ``spans`` holds (start, end, kind, micro-batch, plan stage); kind "BW" is a full backward."""

    def __init__(self, job: TorchJob, dev: torch.device):
        self.job, self.dev, self.spans, self.t_ref = job, dev, [], 0.0

    def wrap(self, stage, plan_stage: int) -> None:
        stage.forward_one_chunk = self.timed(plan_stage, "F", stage.forward_one_chunk)
        stage.backward_one_chunk = self.timed(plan_stage, "B", stage.backward_one_chunk)
        stage.backward_weight_one_chunk = self.timed(plan_stage, "W", stage.backward_weight_one_chunk)

    def timed(self, s: int, kind: str, method):
        plan, opts = self.job.plan, self.job.options

        def run(mb, *args, **kwargs):
            start = time.perf_counter()
            out = method(mb, *args, **kwargs)
            if self.dev.type == "cuda":
                torch.cuda.synchronize(self.dev)
            full = kind == "B" and kwargs.get("full_backward", True)
            if opts.emulate:
                cost = opts.costs.step_duration(plan, Op(kind, mb, s))
                if full and plan.split_backward:      # torch ran I and W as one op
                    cost += opts.costs.step_duration(plan, Op("W", mb, s))
                left = start + cost * opts.unit_s - time.perf_counter()
                if left > 0:
                    set_status(SLEEPING, f"{kind}{mb}.s{s}: padding to its modelled duration")
                    time.sleep(left)
                    set_status(RUNNING, "running torch's schedule")
            self.spans.append((start - self.t_ref, time.perf_counter() - self.t_ref, "BW" if full else kind, mb, s))
            return out
        return run


def stages(rank: int, job: TorchJob, dev: torch.device) -> tuple[list, Clock]:
    """A timed PipelineStage for each stage of this rank; torch's stage index is the chunk (position on the route)."""
    from torch.distributed import pipelining as pp

    plan, clock = job.plan, Clock(job, dev)
    chunk_of = plan.chunk_of_stage()
    mine = []
    for s in sorted(plan.placement[rank], key=chunk_of.get):
        k = chunk_of[s]
        stage = pp.PipelineStage(Chunk(k, job.options.model).to(dev), k, plan.chunks, dev)
        clock.wrap(stage, s)
        mine.append(stage)
    return mine, clock


def run_steps(sched, mine: list, job: TorchJob, dev: torch.device, clock: Clock) -> dict:
    """``options.iterations`` training steps of ``sched``, each from a common start; the last one reported."""
    plan, cfg = job.plan, job.options.model
    x, y = make_batch(cfg, plan.m)
    x, y = x.to(dev), y.to(dev)
    chunks = [st.stage_index for st in mine]
    args = (x,) if 0 in chunks else ()
    kwargs = {"target": y, "losses": []} if plan.chunks - 1 in chunks else {}
    times = []
    for _ in range(job.options.iterations):
        for st in mine:
            st.submod.zero_grad(set_to_none=True)
        clock.spans.clear()
        kwargs.get("losses", []).clear()
        dist.barrier()
        clock.t_ref = time.perf_counter()
        sched.step(*args, **kwargs)
        times.append((min(sp[0] for sp in clock.spans), max(sp[1] for sp in clock.spans)))
    grads = {st.stage_index: [p.grad.detach().cpu() for p in st.submod.parameters()] for st in mine}
    return {"spans": clock.spans, "grads": grads, "losses": [float(v) for v in kwargs.get("losses", [])],
            "times": times}


def measured(plan: Plan, job: TorchJob, results: list[dict]) -> Measured:
    """The order torch ran, as a Plan on the same stages.  A full backward ("BW") is B in a plan without W ops;
    where torch mixes full and split backwards (DualPipeV) it becomes B then W, its span divided in the ratio of
    their modelled durations."""
    costs = job.options.costs
    split = any(sp[2] == "W" for res in results for sp in res["spans"])
    spans = []
    for r, res in enumerate(results):
        row = []
        for s, e, kind, mb, st in res["spans"]:
            if kind == "BW" and split:
                b, w = (costs.step_duration(plan, Op(k, mb, st)) for k in "BW")
                mid = s + (e - s) * b / (b + w) if b + w else s
                row += [Span(r, s, mid, Op("B", mb, st)), Span(r, mid, e, Op("W", mb, st))]
            else:
                row.append(Span(r, s, e, Op("B" if kind == "BW" else kind, mb, st)))
        spans.append(row)
    ran = Plan([[sp.step for sp in row] for row in spans], plan.m, plan.placement, plan.routes,
               name=f"torch {job.schedule}")
    grads = {k: gs for res in results for k, gs in res["grads"].items()}
    losses = next((res["losses"] for res in results if res["losses"]), [])
    return Measured(ran, spans, grads, losses, iteration_times(results), {"torch_schedule": job.schedule})
