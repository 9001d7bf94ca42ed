"""``run_plan``: execute a Plan on P processes, check every gradient, and return the measured Timeline."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..costs import Costs
from ..plan import Plan, ops_of
from ..sim import simulate
from ..timeline import Span, Timeline
from .executor import RankJob, plan_worker
from .launcher import launch
from .model import ModelConfig, max_grad_error, reference_grads

ENGINES = ("course", "torch")


@dataclass
class LiveResult:
    """What a live run produced.

    grad_ok / max_abs_err   every parameter gradient vs the single-process reference (float64: tolerance 1e-10)
    timeline                the measured Timeline (seconds, clocks aligned at a common start)
    measured_makespan       seconds
    simulated               the simulator's Timeline of the same plan under the same Costs
    simulated_makespan      seconds when emulating (1 cost unit = unit_ms), otherwise in cost units
    """

    plan: Plan
    engine: str
    grad_ok: bool
    max_abs_err: float
    timeline: Timeline
    measured_makespan: float
    simulated: Timeline
    simulated_makespan: float
    emulate: bool
    unit_ms: float
    tolerance: float
    losses: list[float] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        """measured / simulated makespan (meaningful when emulating)."""
        return self.measured_makespan / self.simulated_makespan if self.emulate and self.simulated_makespan else None

    @property
    def simulated_seconds(self) -> Timeline:
        """The simulated timeline with 1 cost unit = ``unit_ms``: same axis as the measured one."""
        k, sim = self.unit_ms / 1000.0, self.simulated
        return Timeline(sim.p, [[t * k for t in row] for row in sim.starts], [[t * k for t in row] for row in sim.ends],
                        sim.steps, sim.act, sim.release, f"{sim.name} (simulated)", "s", w_mem=sim.w_mem)

    def to_json(self) -> dict:
        return {"schedule": self.plan.name, "engine": self.engine, "p": self.plan.p, "m": self.plan.m,
                "grad_ok": self.grad_ok, "max_abs_err": self.max_abs_err, "tolerance": self.tolerance,
                "measured_makespan": self.measured_makespan, "simulated_makespan": self.simulated_makespan,
                "simulated_unit": "s" if self.emulate else self.simulated.unit, "emulate": self.emulate,
                "unit_ms": self.unit_ms, "ratio": self.ratio, "measured_bubble_ratio": self.timeline.bubble_ratio,
                "simulated_bubble_ratio": self.simulated.bubble_ratio, "loss": sum(self.losses) / len(self.losses)
                if self.losses else None, "ranks": [self.timeline.ops(r) for r in range(self.timeline.p)]}

    def __repr__(self) -> str:
        check = "OK" if self.grad_ok else "MISMATCH"
        sim = (f"simulated {self.simulated_makespan:.3f} s (ratio {self.ratio:.2f})" if self.emulate
               else f"simulated {self.simulated_makespan:g} cost units")
        return (f"LiveResult({self.plan.name} p={self.plan.p} m={self.plan.m} engine={self.engine}: gradients "
                f"{check} (max abs err {self.max_abs_err:.1e}), measured {self.measured_makespan:.3f} s, {sim})")


def step_durations(plan: Plan, costs: Costs, unit_ms: float) -> list[list[float]]:
    """Each step's modelled duration in seconds, exactly as the simulator times it."""
    table = costs.stage_tables(plan)
    out = []
    for steps in plan.ranks:
        row = []
        for step in steps:
            ops = ops_of(step)
            d = sum(table[op.kind][op.stage] * costs.scale(op.mb) for op in ops)
            row.append(d * (costs.overlap if len(ops) > 1 else 1.0) * unit_ms / 1000.0)
        out.append(row)
    return out


def run_plan(plan: Plan, costs: Costs | None = None, *, emulate: bool = False, unit_ms: float = 20.0,
             blocking_send: bool = False, width: int = 16, blocks_per_stage: int = 2, microbatch_size: int = 4,
             seed: int = 0, dtype: str = "float64", timeout: float = 60.0, engine: str = "course",
             backend: str = "gloo", device: str = "cpu", stall: float = 3.0, iterations: int = 1) -> LiveResult:
    """Run ``plan`` on ``plan.p`` processes and check its gradients against one process.

    ``emulate`` pads each step to its modelled duration (Costs, 1 unit = ``unit_ms``) and holds every message
    for ``costs.comm`` units, so the measured timeline can be compared with ``simulate(plan, costs)``.
    ``blocking_send`` uses blocking send/recv posted at the op (1F1B then deadlocks; the watchdog raises
    ``DeadlockDetected`` after ``stall`` s without progress, at least five of the longest emulated ops).
    ``engine="torch"`` runs the same model through torch.distributed.pipelining's schedule class for the plan.
    ``iterations`` > 1 repeats the training step (fresh gradients each time): the result describes the last one
    and ``meta["iteration_times"]`` lists every iteration's makespan in seconds.
    Raises ``WorkerError``, ``DeadlockDetected`` or ``JobTimeout`` (course.live.launcher) when the job fails.
    """
    target, job, collect = prepare(plan, costs, emulate=emulate, unit_ms=unit_ms, blocking_send=blocking_send,
                                   cfg=ModelConfig(width, blocks_per_stage, microbatch_size, seed, dtype),
                                   engine=engine, backend=backend, device=device, iterations=iterations)
    costs = costs or Costs()
    longest_op = sum(max(costs.per_chunk(n, plan.chunks, plan.p)) for n in "fbw") * max(costs.mb_scale or [1.0])
    slowest = longest_op * unit_ms / 1000.0 + costs.comm * unit_ms / 1000.0 if emulate else 0.0
    results = launch(target, plan.p, (job,), timeout=timeout, backend=backend, stall=max(stall, 5 * slowest),
                     echo=False)
    return collect(results)


def prepare(plan: Plan, costs: Costs | None, *, cfg: ModelConfig, emulate: bool, unit_ms: float,
            blocking_send: bool, engine: str, backend: str, device: str, iterations: int = 1):
    """(launcher target, its job, collect(per-rank results) -> LiveResult) for one live run.

    Split from run_plan so that torchrun (``python -m course.live``) runs the same job with env:// rendezvous."""
    costs = costs or Costs()
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if not unit_ms or unit_ms <= 0:
        raise ValueError(f"unit_ms must be a positive number of milliseconds, got {unit_ms!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
    if backend == "nccl" and device != "cuda":
        raise ValueError("backend nccl needs device cuda (NCCL moves GPU tensors only)")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ValueError("device cuda: no CUDA device is visible (this torch build or machine has none)")
    if engine == "torch":
        if blocking_send:
            raise ValueError("blocking send is a mode of the course engine; torch's schedules always batch "
                             "their sends")
        from .torch_engine import collect_torch, torch_job, torch_worker
        job = torch_job(plan, costs, cfg, emulate=emulate, unit_ms=unit_ms, device=device, backend=backend,
                        iterations=iterations)
        return torch_worker, job, lambda results: collect_torch(plan, job, results)
    simulated = simulate(plan, costs)           # validates; a plan that cannot finish stops here
    durations = step_durations(plan, costs, unit_ms) if emulate else None
    job = RankJob(plan, cfg, durations, costs.comm * unit_ms / 1000.0 if emulate else 0.0, blocking_send, device,
                  backend, iterations)

    def collect(results: list[dict]) -> LiveResult:
        spans = [[Span(r, s, e, plan.ranks[r][i]) for s, e, i in res["spans"]] for r, res in enumerate(results)]
        grads: dict[int, list] = {}
        chunk_of = plan.chunk_of_stage()
        for res in results:
            for stage, gs in res["grads"].items():
                k = chunk_of[stage]
                grads[k] = gs if k not in grads else [a + b for a, b in zip(grads[k], gs)]
        losses = {i: v for res in results for i, v in res["losses"].items()}
        result = finish(plan, costs, cfg, spans, grads, [losses[i] for i in sorted(losses)], simulated,
                        engine="course", emulate=emulate, unit_ms=unit_ms)
        result.meta["iteration_times"] = iteration_times(results)
        return result

    return plan_worker, job, collect


def iteration_times(results: list[dict]) -> list[float]:
    """Each iteration's makespan: latest end minus earliest start over ranks (per-iteration time origin)."""
    per_rank = [res["times"] for res in results]
    return [max(t[i][1] for t in per_rank) - min(t[i][0] for t in per_rank) for i in range(len(per_rank[0]))]


def finish(plan: Plan, costs: Costs, cfg: ModelConfig, spans: list[list[Span]], grads: dict[int, list],
           losses: list[float], simulated: Timeline, *, engine: str, emulate: bool, unit_ms: float) -> LiveResult:
    """Compare gradients with the reference and wrap the measured spans as a Timeline."""
    err = max_grad_error(grads, reference_grads(cfg, plan.chunks, plan.m))
    measured = Timeline.from_spans(plan, spans, costs.stage_tables(plan)["act"], name=f"{plan.name} (measured)",
                                   unit="s")
    sim_makespan = simulated.makespan * unit_ms / 1000.0 if emulate else simulated.makespan
    return LiveResult(plan, engine, err <= cfg.tolerance, err, measured, measured.makespan, simulated, sim_makespan,
                      emulate, unit_ms, cfg.tolerance, losses)
