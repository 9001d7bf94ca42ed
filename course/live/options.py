"""The options of a live run: one validated value, checked once, and the flags that set it.

``run_plan``, ``python -m course live`` and the torchrun entry (``python -m course.live``) all build a
``LiveOptions``; its constructor is the only place that checks them (the executor and the engines trust it).
``check_fits`` is the size guard of a local run: processes against cores, the model against free memory.
This module does not import torch, so the CLI can declare the flags without loading it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from ..command import available_memory, finite_float, positive_int
from ..costs import Costs
from ..validation import check_counts, check_positive_number

ENGINES = ("course", "torch", "torch-runtime")
BACKENDS = ("gloo", "nccl")
DEVICES = ("cpu", "cuda")
DTYPES = {"float64": 8, "float32": 4}      # name -> bytes per element
PROCESSES_PER_CORE = 4                    # more live processes than this per core is refused without force
PROCESS_BYTES = 100 * 10 ** 6             # a worker's own memory beside the model (forked with torch imported)


MODELS = ("mlp", "gpt")


@dataclass(frozen=True)
class ModelConfig:
    """The reference model (course.live.model).  ``kind="mlp"``: blocks of Linear(width, width) + Tanh,
    ``blocks_per_stage`` per chunk, fed micro-batches of ``microbatch_size`` rows.  ``kind="gpt"``: a tiny GPT
    (embedding, ``blocks_per_stage`` attention + MLP layers per chunk of hidden size ``width`` with ``heads``
    heads, lm_head and cross-entropy) fed micro-batches of ``microbatch_size`` sequences of ``seq`` tokens
    from a vocabulary of ``vocab``."""

    width: int = 16
    blocks_per_stage: int = 2
    microbatch_size: int = 4
    seed: int = 0
    dtype: str = "float64"
    kind: str = "mlp"
    seq: int = 8
    heads: int = 2
    vocab: int = 32

    def __post_init__(self):
        check_counts(**{name: getattr(self, name)
                        for name in ("width", "blocks_per_stage", "microbatch_size", "seq", "heads", "vocab")})
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        _check_choice("model", self.kind, MODELS)
        if self.kind == "gpt" and self.width % self.heads:
            raise ValueError(f"the gpt model needs width ({self.width}) divisible by heads ({self.heads})")

    @property
    def rows(self) -> int:
        """Rows of the activation a stage sends on (one per token: sequences x seq for gpt)."""
        return self.microbatch_size * (self.seq if self.kind == "gpt" else 1)

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    @property
    def tolerance(self) -> float:
        """Largest gradient difference still counted as equal (summation order differs between runs)."""
        return 1e-10 if self.dtype == "float64" else 1e-4

    def bytes_needed(self, chunks: int, m: int) -> int:
        """Memory of one run, roughly: weights and gradients twice (the workers and the single-process
        reference) and every micro-batch's saved activations twice (pipeline and reference)."""
        size = DTYPES[self.dtype]
        if self.kind == "gpt":   # 12 h^2 per layer plus the two vocabulary tables; 16 h + a s per token and layer
            weights = (chunks * self.blocks_per_stage * 12 * self.width + 2 * self.vocab) * self.width * size
            per_token = 16 * self.width + self.heads * self.seq + self.vocab
            activations = m * self.rows * per_token * chunks * self.blocks_per_stage * size
            return 4 * weights + 2 * activations
        weights = chunks * self.blocks_per_stage * (self.width + 1) * self.width * size
        activations = m * self.microbatch_size * self.width * chunks * self.blocks_per_stage * 3 * size
        return 4 * weights + 2 * activations


@dataclass(frozen=True)
class LiveOptions:
    """Everything a live run takes besides the plan.

    costs          the Costs the simulator uses; with ``emulate`` each op is padded to its modelled duration
                   (1 cost unit = ``unit_ms``) and each message held for ``costs.comm`` units
    model          the reference model
    engine         course (this runtime), torch (torch.distributed.pipelining's schedule class for the plan's
                   schedule) or torch-runtime (torch's _PipelineScheduleRuntime running the plan's CSV)
    blocking_send  teaching mode of the course engine: blocking send/recv at the op (1F1B deadlocks)
    backend        gloo, or nccl (needs device cuda)
    timeout        seconds of wall clock before the job is ended
    stall          seconds every rank may sit blocked before the watchdog reports a deadlock (at least five
                   of the longest emulated ops)
    iterations     training iterations run back to back (the result describes the last)
    force          run beyond the size guards of ``check_fits``
    """

    costs: Costs = field(default_factory=Costs)
    model: ModelConfig = field(default_factory=ModelConfig)
    engine: str = "course"
    emulate: bool = False
    unit_ms: float = 20.0
    blocking_send: bool = False
    backend: str = "gloo"
    device: str = "cpu"
    timeout: float = 60.0
    stall: float = 3.0
    iterations: int = 1
    force: bool = False

    def __post_init__(self):
        if not isinstance(self.costs, Costs):
            raise ValueError(f"costs must be a course.costs.Costs, got {self.costs!r}")
        if not isinstance(self.model, ModelConfig):
            raise ValueError(f"model must be a ModelConfig, got {self.model!r}")
        _check_choice("engine", self.engine, ENGINES)
        _check_choice("backend", self.backend, BACKENDS)
        _check_choice("device", self.device, DEVICES)
        for name, unit in (("unit_ms", "milliseconds"), ("timeout", "seconds"), ("stall", "seconds")):
            check_positive_number(f"{name} (--{name.replace('_', '-')})", getattr(self, name), unit)
        check_counts(iterations=self.iterations)
        if self.backend == "nccl" and self.device != "cuda":
            raise ValueError("backend nccl needs device cuda (--device cuda): NCCL moves GPU tensors only")
        if self.model.kind != "mlp" and self.engine != "course":
            raise ValueError(f"the {self.model.kind} model runs on the course engine only (--engine course)")
        if self.blocking_send and self.engine != "course":
            raise ValueError("blocking send is a mode of the course engine; torch's schedules always batch "
                             "their sends")

    @classmethod
    def of(cls, costs: Costs | None = None, **kwargs) -> LiveOptions:
        """Options from keywords: LiveOptions fields and ModelConfig fields (width=..., dtype=...) mixed."""
        model_keys = {f.name for f in fields(ModelConfig)}
        own = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - model_keys - own)
        if unknown:
            raise TypeError(f"unknown live option(s) {', '.join(unknown)}; allowed: "
                            f"{', '.join(sorted(own | model_keys))}")
        model = {k: kwargs.pop(k) for k in list(kwargs) if k in model_keys}
        if model and "model" in kwargs:
            raise TypeError("give either model=ModelConfig(...) or its fields, not both")
        if model:
            kwargs["model"] = ModelConfig(**model)
        return cls(costs=costs if costs is not None else Costs(), **kwargs)

    @property
    def unit_s(self) -> float:
        """Seconds per cost unit when emulating."""
        return self.unit_ms / 1000.0

    @property
    def latency_s(self) -> float:
        """Emulated point-to-point latency in seconds (0 without emulation)."""
        return self.costs.comm * self.unit_s if self.emulate else 0.0

    def check_fits(self, plan) -> None:
        """Refuse a local run this machine cannot hold: too many processes for its cores, or a model and batch
        larger than the free memory (``force`` overrides both)."""
        if self.force:
            return
        cores = os.cpu_count() or 1
        if plan.p > PROCESSES_PER_CORE * cores:
            raise ValueError(f"p={plan.p} live processes on {cores} cores is above the limit of "
                             f"{PROCESSES_PER_CORE * cores} ({PROCESSES_PER_CORE} per core); --force to run anyway")
        need = plan.p * PROCESS_BYTES + self.model.bytes_needed(plan.chunks, plan.m)
        have = available_memory()
        if need > have:
            raise ValueError(f"the live job needs about {need / 1e9:.3g} GB (p={plan.p} processes, width "
                             f"{self.model.width}, {self.model.blocks_per_stage} blocks x {plan.chunks} chunks, "
                             f"m={plan.m} micro-batches of {self.model.microbatch_size}), more than the "
                             f"{have / 1e9:.3g} GB of memory available; --force to run anyway")


def _check_choice(name: str, v, allowed) -> None:
    if v not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {v!r}")


# ---- the flags (shared by `python -m course live` and `torchrun ... -m course.live`) -------------------------
def add_live_args(parser) -> None:
    """The flags of a live run besides the schedule and the costs."""
    g = parser.add_argument_group("live run")
    g.add_argument("--emulate", action="store_true", help="pad every op to its modelled duration so the measured "
                   "timeline can be compared with the simulator's")
    g.add_argument("--unit-ms", type=finite_float, default=20.0, metavar="MS",
                   help="milliseconds per cost unit when emulating (default 20)")
    g.add_argument("--engine", choices=ENGINES, default="course",
                   help="course: this runtime; torch: torch.distributed.pipelining's schedule class; "
                   "torch-runtime: torch's _PipelineScheduleRuntime running the plan's CSV")
    g.add_argument("--blocking-send", action="store_true", help="teaching mode: blocking send/recv at each op "
                   "(1F1B deadlocks; the watchdog reports where each rank is stuck)")
    g.add_argument("--backend", choices=BACKENDS, default="gloo", help="process-group backend")
    g.add_argument("--device", choices=DEVICES, default="cpu",
                   help="where stages compute (cuda: one GPU per rank, round-robin)")
    g.add_argument("--model", choices=MODELS, default="mlp", help="mlp: Linear+Tanh blocks; gpt: a tiny GPT "
                   "(embedding, attention + MLP layers, lm_head, cross-entropy) whose saved bytes course.memory "
                   "predicts")
    g.add_argument("--width", type=positive_int, default=16, help="hidden width (of the blocks, or gpt's hidden "
                   "size)")
    g.add_argument("--blocks", type=positive_int, default=2, help="blocks (gpt: layers) per stage (chunk)")
    g.add_argument("--seq", type=positive_int, default=8, help="gpt: tokens per sequence (default 8)")
    g.add_argument("--heads", type=positive_int, default=2, help="gpt: attention heads (default 2)")
    g.add_argument("--timeout", type=finite_float, default=60.0, help="seconds before the job is ended (default 60)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--ascii", action="store_true", help="also print the measured timeline as ASCII")


def options_from_args(args, costs: Costs) -> LiveOptions:
    model = ModelConfig(width=args.width, blocks_per_stage=args.blocks, kind=args.model, seq=args.seq,
                        heads=args.heads)
    return LiveOptions(costs=costs, model=model,
                       engine=args.engine, emulate=args.emulate, unit_ms=args.unit_ms,
                       blocking_send=args.blocking_send, backend=args.backend, device=args.device,
                       timeout=args.timeout, force=args.force)
