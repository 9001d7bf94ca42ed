"""``run_plan``: execute a Plan on P processes with one of the engines, check every gradient, return the measured
Timeline next to the simulated one.

One run: ``prepare`` (validate and simulate the plan, let the engine build its job) -> the engine's worker on every
rank (``launch`` here, torchrun in ``python -m course.live``) -> ``finish`` (gradient check, Timeline, LiveResult),
the same for every engine (the interface is in engine.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import ModuleType

from ..plan import Plan
from ..sim import simulate
from ..timeline import Timeline
from . import course_engine, torch_engine, torch_runtime
from .executor import check_cuda
from .launcher import launch
from ..memory import two_part_memory
from .model import activation_bytes, freed_by_b, max_grad_error, reference_grads
from .options import ENGINES, LiveOptions

ENGINE_MODULES: dict[str, ModuleType] = {"course": course_engine, "torch": torch_engine,
                                         "torch-runtime": torch_runtime}
assert tuple(ENGINE_MODULES) == ENGINES


@dataclass(frozen=True)
class LiveResult:
    """What a live run produced: the plan that ran, the measured and the simulated Timeline, the gradient check.

    plan        what ran (for the torch engine: the order torch chose, as a Plan)
    timeline    the measured Timeline (seconds, clocks aligned at a common start)
    simulated   the simulator's Timeline of ``plan`` under the same Costs (cost units)
    max_abs_err every parameter gradient vs the single-process reference (``grad_ok``: within ``tolerance``)
    losses      per micro-batch
    meta        ``iteration_times`` (every iteration's makespan in seconds) and engine facts (``torch_schedule``)
    """

    plan: Plan
    engine: str
    options: LiveOptions
    timeline: Timeline
    simulated: Timeline
    max_abs_err: float
    losses: list[float] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    @property
    def tolerance(self) -> float:
        return self.options.model.tolerance

    @property
    def grad_ok(self) -> bool:
        return self.max_abs_err <= self.tolerance

    @property
    def emulate(self) -> bool:
        return self.options.emulate

    @property
    def unit_ms(self) -> float:
        return self.options.unit_ms

    @property
    def measured_makespan(self) -> float:
        """Seconds."""
        return self.timeline.makespan

    @property
    def simulated_makespan(self) -> float:
        """Seconds when emulating (1 cost unit = unit_ms), otherwise cost units."""
        return self.simulated.makespan * self.options.unit_s if self.emulate else self.simulated.makespan

    @property
    def ratio(self) -> float | None:
        """measured / simulated makespan (meaningful when emulating)."""
        return self.measured_makespan / self.simulated_makespan if self.emulate and self.simulated_makespan else None

    @property
    def simulated_seconds(self) -> Timeline:
        """The simulated timeline with 1 cost unit = ``unit_ms``: same axis as the measured one."""
        k, sim = self.options.unit_s, self.simulated
        return Timeline(sim.p, [[t * k for t in row] for row in sim.starts], [[t * k for t in row] for row in sim.ends],
                        sim.steps, sim.act, sim.release, f"{sim.name} (simulated)", "s", w_mem=sim.w_mem)

    def to_json(self) -> dict:
        def finite(x):   # standard JSON has no infinity (a NaN gradient makes the error infinite)
            return x if math.isfinite(x) else None

        return {"schedule": self.plan.name, "engine": self.engine, "p": self.plan.p, "m": self.plan.m,
                "grad_ok": self.grad_ok, "max_abs_err": finite(self.max_abs_err), "tolerance": self.tolerance,
                "measured_makespan": self.measured_makespan, "simulated_makespan": self.simulated_makespan,
                "simulated_unit": "s" if self.emulate else self.simulated.unit, "emulate": self.emulate,
                "unit_ms": self.unit_ms, "ratio": self.ratio, "measured_bubble_ratio": self.timeline.bubble_ratio,
                "simulated_bubble_ratio": self.simulated.bubble_ratio,
                "loss": finite(sum(self.losses) / len(self.losses)) if self.losses else None,
                "measured_peak_activation_bytes": self.meta.get("measured_peak_activation_bytes"),
                "simulated_peak_activation_bytes": self.meta.get("simulated_peak_activation_bytes"),
                "ranks": [self.timeline.ops(r) for r in range(self.timeline.p)]}

    def report(self, ascii_timeline: bool = False) -> str:
        """The text `python -m course live` prints."""
        t, s = self.timeline, self.simulated
        lines = [f"{self.plan.name} p={self.plan.p} m={self.plan.m}: engine {self.engine}, "
                 + (f"emulated device time ({self.unit_ms:g} ms per cost unit)" if self.emulate else "no emulation"),
                 f"gradients: {'OK' if self.grad_ok else 'MISMATCH'} (max abs error {self.max_abs_err:.2e}, "
                 f"tolerance {self.tolerance:g})",
                 f"loss: {sum(self.losses) / len(self.losses):.6f}" if self.losses else "loss: n/a"]
        if self.emulate:
            lines.append(f"makespan: measured {self.measured_makespan:.3f} s, simulated "
                         f"{self.simulated_makespan:.3f} s (measured/simulated {self.ratio:.2f})")
        else:
            lines.append(f"makespan: measured {self.measured_makespan:.4f} s; simulated {s.makespan:g} cost units "
                         "(use --emulate to compare in seconds)")
        if self.emulate:
            lines.append(f"bubble ratio (idle share of rank time): measured {t.bubble_ratio:.1%} with emulated "
                         f"device time, simulated {s.bubble_ratio:.1%}")
        else:
            lines.append(f"bubble ratio (idle share of rank time): measured {t.bubble_ratio:.1%} of this machine's "
                         f"real ops (microseconds each, so messaging dominates), simulated {s.bubble_ratio:.1%} "
                         "under the modelled costs; --emulate pads each op to its modelled duration to compare")
        measured, predicted = (self.meta.get(k) for k in ("measured_peak_activation_bytes",
                                                           "simulated_peak_activation_bytes"))
        if measured:
            lines.append(f"peak bytes saved for backward per rank: measured {measured}, simulated {predicted}")
        if ascii_timeline:
            from ..plots import ascii_timeline as draw
            lines += ["measured timeline:", draw(t), "simulated timeline:", draw(s)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        check = "OK" if self.grad_ok else "MISMATCH"
        sim = (f"simulated {self.simulated_makespan:.3f} s (ratio {self.ratio:.2f})" if self.emulate
               else f"simulated {self.simulated_makespan:g} cost units")
        return (f"LiveResult({self.plan.name} p={self.plan.p} m={self.plan.m} engine={self.engine}: gradients "
                f"{check} (max abs err {self.max_abs_err:.1e}), measured {self.measured_makespan:.3f} s, {sim})")


@dataclass(frozen=True)
class Prepared:
    """A live run ready to start: the engine, its job, and the simulated Timeline of the plan."""

    plan: Plan
    options: LiveOptions
    engine: ModuleType
    job: object
    simulated: Timeline

    @property
    def stall(self) -> float:
        """The watchdog's patience: ``options.stall``, and at least five of the longest emulated steps."""
        opts = self.options
        if not opts.emulate:
            return opts.stall
        longest = max((d for row in opts.costs.durations(self.plan) for d in row), default=0.0)
        return max(opts.stall, 5 * (longest * opts.unit_s + opts.latency_s))


def run_plan(plan: Plan, costs=None, *, options: LiveOptions | None = None, **kwargs) -> LiveResult:
    """Run ``plan`` on ``plan.p`` processes and check its gradients against one process.

    Options come as ``options=LiveOptions(...)`` or as keywords (LiveOptions and ModelConfig fields, e.g.
    ``emulate=True, unit_ms=40, engine="torch", width=8``); see ``LiveOptions`` for what each means.
    ``emulate`` pads each step to its modelled duration (1 cost unit = ``unit_ms``) and holds every message
    for ``costs.comm`` units, so the measured timeline can be compared with ``simulate(plan, costs)``.
    ``blocking_send`` uses blocking send/recv posted at the op (1F1B then deadlocks: ``DeadlockDetected``).
    ``iterations`` > 1 repeats the training step (fresh gradients each time): the result describes the last one
    and ``meta["iteration_times"]`` lists every iteration's makespan in seconds.
    Raises ``ValueError`` for bad options or a plan this machine cannot hold (``force=True`` overrides the size
    guards), ``WorkerError``, ``DeadlockDetected`` or ``JobTimeout`` (course.live.launcher) when the job fails.
    """
    if options is None:
        options = LiveOptions.of(costs, **kwargs)
    elif costs is not None or kwargs:
        raise TypeError("give either options=LiveOptions(...) or costs and keywords, not both")
    options.check_fits(plan)
    run = prepare(plan, options)
    results = launch(run.engine.worker, plan.p, (run.job,), timeout=options.timeout, backend=options.backend,
                     stall=run.stall, echo=False)
    return finish(run, results)


def prepare(plan: Plan, options: LiveOptions) -> Prepared:
    """Everything that can be checked before a process starts; the engine's job for every rank."""
    if options.device == "cuda":
        check_cuda()
    simulated = simulate(plan, options.costs)      # validates; a plan that cannot finish stops here
    if options.emulate:
        emulated = simulated.makespan * options.unit_s * options.iterations    # inf for a huge --unit-ms
        if not emulated <= options.timeout:
            raise ValueError(f"--emulate at --unit-ms {options.unit_ms:g} makes {plan.name}'s simulated makespan "
                             f"{simulated.makespan:g} units x {options.iterations} iteration(s) last "
                             f"{emulated:.3g} s, beyond --timeout {options.timeout:g} s; lower --unit-ms or raise "
                             "--timeout")
    engine = ENGINE_MODULES[options.engine]
    return Prepared(plan, options, engine, engine.job(plan, options), simulated)


def finish(run: Prepared, results: list[dict]) -> LiveResult:
    """Every rank's results -> LiveResult: gradients against the single-process reference, the measured Timeline,
    and the simulation of what ran."""
    opts = run.options
    got = run.engine.measured(run.plan, run.job, results)
    simulated = run.simulated if got.plan is run.plan else simulate(got.plan, opts.costs)
    err = max_grad_error(got.grads, reference_grads(opts.model, got.plan.chunks, got.plan.m))
    measured = Timeline.from_spans(got.plan, got.spans, opts.costs.stage_tables(got.plan)["act"],
                                   name=f"{got.plan.name} (measured)", unit="s", w_mem=opts.costs.w_mem)
    predicted = simulated_activation_bytes(simulated, got.plan, opts)
    return LiveResult(got.plan, opts.engine, opts, measured, simulated, err, got.losses,
                      {"iteration_times": got.iteration_times, "simulated_activation_bytes": predicted,
                       "simulated_peak_activation_bytes": [round(max(v for _, v in c)) for c in predicted],
                       **got.meta})


def simulated_activation_bytes(simulated: Timeline, plan: Plan, options: LiveOptions) -> list[list[tuple]]:
    """The simulator's account of what the runtime saves for the backward, per rank [(cost units, bytes)]: each
    chunk's bytes per micro-batch (``model.activation_bytes``, counted as the runtime's saved-tensor hooks count
    them) allocated at its F; a full backward frees them all, a split backward's B the part W does not need
    (``model.freed_by_b``) and W the rest."""
    total = activation_bytes(options.model, plan.chunks)
    freed = freed_by_b(options.model, plan.chunks)
    return two_part_memory(simulated, plan, [t - f for t, f in zip(total, freed)], freed)
