"""``LiveResult``: what a live run produced.  Kept apart from the runner, torch-free, so that a recorded run
(``course.recordings``) comes back as the same object where torch is missing."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..plan import Plan
from ..timeline import Timeline
from .options import LiveOptions


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
        return sim.replace(starts=[[t * k for t in row] for row in sim.starts],
                           ends=[[t * k for t in row] for row in sim.ends], name=f"{sim.name} (simulated)", unit="s")

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
