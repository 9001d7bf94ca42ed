"""The same model and batch through torch.distributed.pipelining, side by side with the course runtime.

Each course schedule maps onto one of torch's schedule classes and its stage placement:

    gpipe -> ScheduleGPipe            1f1b -> Schedule1F1B                     (one stage per rank)
    interleaved -> ScheduleInterleaved1F1B   zb-h1 -> ScheduleInterleavedZeroBubble   (rank r: r, r+p, ...)
    zbv -> ScheduleZBVZeroBubble      dualpipev -> ScheduleDualPipeV           (rank r: r and 2p-1-r)

torch orders the ops itself; the order it ran (recorded per rank) becomes a course Plan, so the measured spans,
the simulator and the plots all speak about the same thing.  Spans are timed by wrapping the stage's forward/backward/weight methods; with ``emulate`` each is padded
to its modelled duration like the course engine does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..costs import Costs
from ..plan import Op, Plan
from ..sim import simulate
from ..timeline import Span
from .executor import select_device
from .model import Chunk, ModelConfig, loss_fn, make_batch
from .worker import RUNNING, SLEEPING, set_status

from ..torch_bridge import TORCH_SCHEDULES as _BRIDGE

# course schedule -> (torch class, placement style), from the bridge's table (torch class -> course schedule)
TORCH_SCHEDULES = {course: (cls, "single" if local == 1 else "v" if local == 2 else "loop")
                   for cls, (course, local) in _BRIDGE.items()}


@dataclass(frozen=True)
class TorchJob:
    schedule: str        # torch class name
    style: str           # placement: single, loop or v
    p: int
    m: int
    chunks: int
    cfg: ModelConfig
    costs: Costs
    unit_ms: float | None   # None: no emulation
    device: str = "cpu"
    backend: str = "gloo"
    iterations: int = 1


def stages_of(rank: int, p: int, chunks: int, style: str) -> list[int]:
    if style == "single":
        return [rank]
    if style == "loop":
        return [rank + i * p for i in range(chunks // p)]
    return [rank, 2 * p - 1 - rank]


def plan_from_spans(spans: list[list[Span]], m: int, chunks: int, style: str, name: str) -> Plan:
    """The order torch actually ran, as a course Plan (rank r's steps = its measured ops in order).

    torch's own ``pipeline_order`` is a display IR that does not always match execution for the single-stage
    schedules, so the measured order is the reference."""
    p = len(spans)
    return Plan([[sp.step for sp in rs] for rs in spans], m, [stages_of(r, p, chunks, style) for r in range(p)],
                name=name)


def torch_worker(rank: int, world_size: int, job: TorchJob) -> dict:
    """Launcher target: build this rank's torch PipelineStage(s), run one step, return spans and gradients."""
    import torch.fx.experimental.symbolic_shapes  # noqa: F401  (see executor.plan_worker)
    from torch.distributed import pipelining as pp

    dev = select_device(job.device, job.backend, rank)
    cfg, mine = job.cfg, stages_of(rank, job.p, job.chunks, job.style)
    stages = [pp.PipelineStage(Chunk(k, cfg).to(dev), k, job.chunks, dev)
              for k in mine]
    cls = getattr(pp, job.schedule)
    sched = cls(stages[0] if job.style == "single" else stages, n_microbatches=job.m, loss_fn=loss_fn)
    f, b, w = (job.costs.per_chunk(n, job.chunks, job.p) for n in ("f", "b", "w"))
    spans: list[tuple] = []
    t_ref = [0.0]

    def timed(k: int, kind: str, method):
        def run(chunk_id, *args, **kwargs):
            start = time.perf_counter()
            out = method(chunk_id, *args, **kwargs)
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            if job.unit_ms:
                full = kind == "B" and kwargs.get("full_backward", True)
                cost = {"F": f[k], "B": b[k] + (w[k] if full else 0.0), "W": w[k]}[kind]
                left = start + cost * job.costs.scale(chunk_id) * job.unit_ms / 1000 - time.perf_counter()
                if left > 0:
                    set_status(SLEEPING, f"{kind}{chunk_id}.s{k}: padding to its modelled duration")
                    time.sleep(left)
                    set_status(RUNNING, "running torch's schedule")
            full = kind == "B" and kwargs.get("full_backward", True)
            spans.append((start - t_ref[0], time.perf_counter() - t_ref[0], "BW" if full else kind, chunk_id, k))
            return out
        return run

    for st, k in zip(stages, mine):
        st.forward_one_chunk = timed(k, "F", st.forward_one_chunk)
        st.backward_one_chunk = timed(k, "B", st.backward_one_chunk)
        st.backward_weight_one_chunk = timed(k, "W", st.backward_weight_one_chunk)
    x, y = make_batch(cfg, job.m)
    x, y = x.to(dev), y.to(dev)
    args = (x,) if 0 in mine else ()
    kwargs = {"target": y, "losses": []} if job.chunks - 1 in mine else {}
    times = []
    for _ in range(job.iterations):
        for st in stages:
            st.submod.zero_grad(set_to_none=True)
        spans.clear()
        kwargs.get("losses", []).clear()
        dist.barrier()
        t_ref[0] = time.perf_counter()
        sched.step(*args, **kwargs)
        times.append((min(sp[0] for sp in spans), max(sp[1] for sp in spans)))
    grads = {k: [p.grad.detach().cpu() for p in st.submod.parameters()] for st, k in zip(stages, mine)}
    losses = [float(v) for v in kwargs.get("losses", [])]
    return {"spans": spans, "grads": grads, "losses": losses, "times": times}


def torch_job(plan: Plan, costs: Costs, cfg: ModelConfig, *, emulate: bool, unit_ms: float,
              device: str = "cpu", backend: str = "gloo", iterations: int = 1) -> TorchJob:
    """The torch schedule class that matches ``plan`` (by its schedule name and placement)."""
    if plan.name not in TORCH_SCHEDULES:
        raise ValueError(f"--engine torch has no counterpart for schedule {plan.name!r}; it runs: "
                         f"{', '.join(TORCH_SCHEDULES)}")
    cls, style = TORCH_SCHEDULES[plan.name]
    if device == "cuda" and backend == "gloo" and plan.p > 1:
        raise ValueError("--engine torch sends GPU tensors directly, which gloo cannot: use --backend nccl with "
                         "--device cuda (one GPU per rank)")
    if style == "single" and plan.chunks != plan.p or style == "v" and plan.chunks != 2 * plan.p \
            or plan.chunks % plan.p:
        raise ValueError(f"{plan.name} with {plan.chunks} chunks on {plan.p} ranks does not match torch's "
                         f"{cls} placement")
    return TorchJob(cls, style, plan.p, plan.m, plan.chunks, cfg, costs, unit_ms if emulate else None, device,
                    backend, iterations)


def collect_torch(plan: Plan, job: TorchJob, results: list[dict]):
    """Per-rank results -> LiveResult, with the order torch ran as the plan that is simulated."""
    from .runner import finish, iteration_times

    # A full backward ("BW") is B in a plan without W ops; where torch mixes full and split backwards
    # (DualPipeV) it becomes B then W, its span divided in the cost ratio b : w.
    split = any(sp[2] == "W" for res in results for sp in res["spans"])
    b, w = (job.costs.per_chunk(n, job.chunks, job.p) for n in ("b", "w"))
    spans = []
    for r, res in enumerate(results):
        row = []
        for s, e, kind, mb, st in res["spans"]:
            if kind == "BW" and split:
                mid = s + (e - s) * b[st] / (b[st] + w[st]) if b[st] + w[st] else s
                row += [Span(r, s, mid, Op("B", mb, st)), Span(r, mid, e, Op("W", mb, st))]
            else:
                row.append(Span(r, s, e, Op("B" if kind == "BW" else kind, mb, st)))
        spans.append(row)
    tplan = plan_from_spans(spans, plan.m, plan.chunks, job.style, f"torch {job.schedule}")
    grads: dict[int, list] = {}
    for res in results:
        grads.update(res["grads"])
    losses = next((res["losses"] for res in results if res["losses"]), [])
    result = finish(tplan, job.costs, job.cfg, spans, grads, losses, simulate(tplan, job.costs), engine="torch",
                    emulate=job.unit_ms is not None, unit_ms=job.unit_ms or 20.0)
    result.meta["torch_schedule"] = job.schedule
    result.meta["iteration_times"] = iteration_times(results)
    return result
