"""``run_plan``: execute a Plan on P processes with one of the engines, check every gradient, return the measured
Timeline next to the simulated one.

One run: ``prepare`` (validate and simulate the plan, let the engine build its job) -> the engine's worker on every
rank (``launch`` here, torchrun in ``python -m course.live``) -> ``finish`` (gradient check, Timeline, LiveResult),
the same for every engine (the interface is in engine.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from ..memory import two_part_memory
from ..plan import Plan
from ..sim import simulate
from ..timeline import Timeline
from . import course_engine, torch_engine, torch_runtime
from .executor import check_cuda
from .launcher import launch
from .model import activation_bytes, freed_by_b, max_grad_error, reference_grads
from .options import ENGINES, LiveOptions
from .result import LiveResult

ENGINE_MODULES: dict[str, ModuleType] = {"course": course_engine, "torch": torch_engine,
                                         "torch-runtime": torch_runtime}
assert tuple(ENGINE_MODULES) == ENGINES


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
    measured = Timeline.from_spans(got.plan, got.spans, opts.costs, name=f"{got.plan.name} (measured)", unit="s")
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
