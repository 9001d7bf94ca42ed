"""The live results the chapters show, one named case each, and the functions that produce them (torch inside).

A case is the function that runs it (``module:function``), its inputs (plain data, so they can be fingerprinted)
and the modules whose code decides the result.  To add one: write or reuse a function here, add a line to CASES,
run ``python -m course.recordings run NAME --write``.  Chapters ask for cases by name (``recordings.run(NAME)``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# The code a live run's result depends on (a change here makes its recording stale).
LIVE_CODE = ("course.live.executor", "course.live.model", "course.live.runner", "course.live.result",
             "course.live.launcher", "course.live.worker", "course.live.zygote", "course.live.course_engine",
             "course.live.engine", "course.live.options", "course.live.saved", "course.costs", "course.timeline")
TORCH_ENGINE_CODE = LIVE_CODE + ("course.live.torch_engine", "course.torch_bridge")


@dataclass(frozen=True)
class Case:
    function: str                       # "module:function" called with **inputs
    inputs: dict = field(default_factory=dict)
    code: tuple[str, ...] = ()          # modules whose source the result depends on (the function's own is added)
    about: str = ""                     # what a chapter shows from it


# ---- the functions ------------------------------------------------------------------------------------------------
def live_run(schedule: str, p: int, m: int, costs: dict | None = None, build_args: dict | None = None, **options):
    """``run_plan(build(schedule, p, m, **build_args), Costs(**costs), **options)``: a LiveResult (or its error)."""
    from ..costs import Costs
    from ..live import run_plan
    from ..schedules import build

    return run_plan(build(schedule, p, m, **(build_args or {})), Costs(**costs) if costs is not None else None,
                    **options)


def matmul_seconds(sizes: list[int], hidden: int = 512, repeats: int = 3, budget: float = 0.01) -> dict[int, float]:
    """Best wall time of one (rows x hidden) @ (hidden x hidden) product on one CPU thread, for each row count."""
    import torch

    torch.manual_seed(0)
    weight = torch.randn(hidden, hidden)

    def best(rows: int) -> float:
        x = torch.randn(rows, hidden)
        x @ weight   # warm-up
        fastest, spent = float("inf"), 0.0
        while spent < budget:
            t0 = time.perf_counter()
            x @ weight
            dt = time.perf_counter() - t0
            fastest, spent = min(fastest, dt), spent + dt
        return fastest

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return {n: min(best(n) for _ in range(repeats)) for n in sizes}
    finally:
        torch.set_num_threads(threads)


def hello_twice(p: int) -> dict:
    """``launch(hello, p)`` twice: every rank's row, and the seconds of the first start and of the second."""
    from ..live import launch
    from ..live.demos import hello

    t0 = time.perf_counter()
    rows = launch(hello, p, echo=False)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    launch(hello, p, echo=False)
    return {"rows": rows, "first_s": first, "again_s": time.perf_counter() - t0}


def worker_error(p: int, bad_rank: int) -> None:
    """``launch(fail_on, p, args=(bad_rank,))``: raises the WorkerError of rank ``bad_rank``."""
    from ..live import launch
    from ..live.demos import fail_on

    launch(fail_on, p, args=(bad_rank,), timeout=30, echo=False)


def minipipe_outcomes(p: int, m: int) -> dict:
    """Chapter 3's three blocking orderings: per ordering the gradient error, or the deadlocked ranks' states."""
    from .. import minipipe
    from ..live import DeadlockDetected

    lengths = [minipipe.ROWS] * m
    want = minipipe.reference(p, m, lengths)
    out = {}
    for comm in minipipe.COMMS:
        try:
            out[comm] = {"max_error": minipipe.max_error(minipipe.run(p, m, comm, lengths), want)}
        except DeadlockDetected as err:
            out[comm] = {"states": err.states}
    return out


def torch_refusal(schedule: str, p: int, m: int) -> str | None:
    """The first line of the error torch's schedule class raises for (p, m), or None when it accepts them."""
    from ..torch_bridge import torch_schedule

    try:
        torch_schedule(schedule, p, m)
    except ValueError as err:
        return str(err).strip().splitlines()[0]
    return None


def linear_backward(n: int = 6, d_in: int = 5, d_out: int = 3) -> dict:
    """Chapter 5: a Linear's B (dX = dY W^T) and W (dW = X^T dY) by hand against autograd, in float64."""
    import torch

    torch.manual_seed(0)
    X = torch.randn(n, d_in, dtype=torch.float64, requires_grad=True)
    W = torch.randn(d_in, d_out, dtype=torch.float64, requires_grad=True)
    dY = torch.randn(n, d_out, dtype=torch.float64)          # what the next stage sends back

    (X @ W).backward(dY)                                       # autograd: fills X.grad and W.grad
    dX_hand = dY @ W.detach().T                                # B: input gradient, needs dY and W
    dW_hand = X.detach().T @ dY                                # W: weight gradient, needs dY and the saved input X
    return {"dx_shape": list(dX_hand.shape), "err_dx": (dX_hand - X.grad).abs().max().item(),
            "dw_shape": list(dW_hand.shape), "err_dw": (dW_hand - W.grad).abs().max().item()}


def split_backward() -> dict:
    """Chapter 5: a whole stage's backward split into B (input gradient) and W (parameters) vs one backward()."""
    import torch

    torch.manual_seed(1)
    stage = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8)).double()
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    dy = torch.randn(4, 8, dtype=torch.float64)

    y = stage(x)
    (dx,) = torch.autograd.grad(y, x, dy, retain_graph=True)      # B now: the previous stage is waiting for dx
    dws = torch.autograd.grad(y, list(stage.parameters()), dy)     # W later: only this rank's optimizer needs it

    stage.zero_grad()
    x_ref = x.detach().requires_grad_()
    stage(x_ref).backward(dy)                                     # the unsplit backward, for reference
    err = max([(dx - x_ref.grad).abs().max().item()] +
              [(g - q.grad).abs().max().item() for g, q in zip(dws, stage.parameters())])
    return {"err": err, "tensors": len(dws)}


def plan_digest(plan) -> str:
    """A plan's order and placement in 71 characters: what a sweep compares, without storing every plan."""
    import hashlib

    return "sha256:" + hashlib.sha256(f"{plan.format()}|{plan.placement}".encode()).hexdigest()


def torch_orders(plans: list[list], digests: list[list]) -> dict:
    """torch's order for each ``[schedule class, p, m, v]``: in ``plans`` as a course Plan, in ``digests`` as its
    ``plan_digest``; either way the first line of the error torch refuses it with, where it does (chapter 4
    compares them with ``interleaved-flex`` and ``interleaved``)."""
    from ..torch_bridge import torch_plan

    def ask(cls_name, p, m, v, digest):
        try:
            plan = torch_plan(cls_name, p, m, v=v)
        except ValueError as err:
            return str(err).strip().splitlines()[0]
        return plan_digest(plan) if digest else plan

    return {"plans": {(c, p, m, v): ask(c, p, m, v, False) for c, p, m, v in plans},
            "digests": {(c, p, m, v): ask(c, p, m, v, True) for c, p, m, v in digests}}


# Chapter 4's requests: m = 1..3p at p=4, v=2 and the breadth-first order (plans), and the points of its seeded
# sweep over p, v and m (claims.sweep; digests).
CH4_FLEX_SWEEP = {"space": {"p": (2, 8), "v": (2, 4), "m": (1, 32)}, "n": 100, "seed": 6}


def _ch4_requests() -> dict:
    from ..claims import sweep_points

    sweep = dict.fromkeys((pt["p"], pt["m"], pt["v"]) for pt in sweep_points(**CH4_FLEX_SWEEP))
    return {"plans": [["ScheduleInterleaved1F1B", 4, m, 2] for m in range(1, 13)] + [["ScheduleLoopedBFS", 4, 8, 2]],
            "digests": [["ScheduleInterleaved1F1B", p, m, v] for p, m, v in sweep]}


_EMULATED = {"costs": {"f": 1, "b": 1, "w": 1}, "emulate": True, "unit_ms": 20}
_P4M8 = {"p": 4, "m": 8}
_RUN = "course.recordings.cases:live_run"

CASES: dict[str, Case] = {
    "matmul-timing": Case("course.recordings.cases:matmul_seconds", {"sizes": [2 ** k for k in range(9)]},
                          about="ch1: matmul throughput by rows on one CPU thread (the best m)"),
    "hello-twice": Case("course.recordings.cases:hello_twice", {"p": 4}, LIVE_CODE,
                        about="ch3: four gloo processes say hello; first and second start time"),
    "worker-error": Case("course.recordings.cases:worker_error", {"p": 4, "bad_rank": 2}, LIVE_CODE,
                         about="ch3: a worker's exception, named by rank"),
    "1f1b": Case(_RUN, {"schedule": "1f1b", **_P4M8}, LIVE_CODE,
                 about="ch3: 1F1B on 4 processes, every gradient checked"),
    "1f1b-blocking": Case(_RUN, {"schedule": "1f1b", **_P4M8, "blocking_send": True}, LIVE_CODE,
                          about="ch3: blocking sends deadlock 1F1B; the watchdog's report"),
    "1f1b-blocking-stall2": Case(_RUN, {"schedule": "1f1b", **_P4M8, "blocking_send": True, "stall": 2.0,
                                        "timeout": 60}, LIVE_CODE,
                                 about="ch8: find the hang from the watchdog's report"),
    "gpipe-blocking": Case(_RUN, {"schedule": "gpipe", "p": 4, "m": 4, "blocking_send": True}, LIVE_CODE,
                           about="ch3: GPipe survives blocking sends"),
    "minipipe-orderings": Case("course.recordings.cases:minipipe_outcomes", dict(_P4M8),
                               LIVE_CODE + ("course.minipipe",),
                               about="ch3: naive / parity / batched blocking orderings"),
    "1f1b-emulated": Case(_RUN, {"schedule": "1f1b", **_P4M8, **_EMULATED}, LIVE_CODE,
                          about="ch3, ch5, ch8: measured vs simulated 1F1B (20 ms per cost unit)"),
    "gpipe-emulated": Case(_RUN, {"schedule": "gpipe", **_P4M8, **_EMULATED}, LIVE_CODE,
                           about="ch3, ch8: measured vs simulated GPipe"),
    "zb-h1-emulated": Case(_RUN, {"schedule": "zb-h1", **_P4M8, **_EMULATED}, LIVE_CODE,
                           about="ch3, ch5: measured vs simulated ZB-H1"),
    "1f1b-uneven-emulated": Case(_RUN, {"schedule": "1f1b", **_P4M8, **_EMULATED,
                                        "costs": {"f": [1, 1, 1, 2], "b": [1, 1, 1, 2], "w": [1, 1, 1, 2]}},
                                 LIVE_CODE, about="ch8: the last stage twice as heavy, measured"),
    "1f1b-torch-engine": Case(_RUN, {"schedule": "1f1b", **_P4M8, "engine": "torch", **_EMULATED},
                              TORCH_ENGINE_CODE, about="ch3: the same plan through torch's Schedule1F1B"),
    "linear-backward": Case("course.recordings.cases:linear_backward",
                            about="ch5: a Linear's B and W by hand against autograd"),
    "split-backward": Case("course.recordings.cases:split_backward",
                           about="ch5: a stage's backward split into B and W against one backward()"),
    "torch-interleaved-orders": Case("course.recordings.cases:torch_orders", _ch4_requests(),
                                     ("course.torch_bridge",),
                                     about="ch4: torch's interleaved orders (and refusals) next to interleaved-flex"),
    "interleaved-emulated": Case(_RUN, {"schedule": "interleaved", "p": 2, "m": 4, "build_args": {"v": 2},
                                        "emulate": True}, LIVE_CODE,
                                 about="ch4: interleaved (v=2) on 2 processes, measured vs simulated"),
    "torch-zbv-order": Case("course.torch_bridge:torch_plan", {"cls_name": "ScheduleZBVZeroBubble", "p": 4, "m": 8},
                            about="ch6: torch's ScheduleZBVZeroBubble order as a course Plan"),
    "torch-refuses-m-below-p": Case("course.recordings.cases:torch_refusal",
                                    {"schedule": "Schedule1F1B", "p": 4, "m": 2}, ("course.torch_bridge",),
                                    about="ch3: torch's Schedule1F1B refuses m < p"),
}
