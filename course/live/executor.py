"""Run one rank's share of a Plan with real tensors: an interpreter of the lowered plan (course/lower.py).

Actions.  ``lower(plan)`` gives this rank its COMPUTE, SEND and RECV actions, in order.  COMPUTE runs a step's ops
(F, full backward, split B/W); SEND hands the tensor an op produced for another rank to the transport, RECV takes
one from it (transport.py: non-blocking by default, blocking in the teaching mode).  Which op needs which tensor
is the lowering's (``Message``: producer and consumer); the executor keeps the tensors in flight by message and
never looks at routes.  A message between two stages of this rank has no action: its consumer finds it here.

Backward.  A plan with W ops splits the backward: B takes gradients at the stage input and at each Linear's output
z (one autograd pass, graph kept), W then needs one small product per Linear (dW = dz^T h, db = sum dz) through
autograd on the kept graph.  Without W ops, B is the full backward.  Parameter gradients accumulate in
``.grad`` across micro-batches, exactly as in plain training.  The last stage scales its loss by 1/M.

Memory.  Each F runs under saved-tensor hooks (saved.py) that count the storages autograd keeps for the backward;
the level after every step is reported (``saved_bytes``) with its peak.  A hand-off between two stages of one
rank is copied, as a transfer from another rank would be, and every micro-batch of data is its own storage, so
what a stage keeps is its own whatever the placement.

Emulation.  With ``durations`` each step is padded to its modelled length and each message held for the modelled
latency (emulation.py): two wrappers, set up once here.

Chunks.  The position of a stage on its micro-batch's route is the model chunk it computes.  Two stages computing
the same chunk (DualPipe's two directions) are two copies of that chunk with the same initial weights; each
accumulates the gradient of the micro-batches routed through it, and their sum is the whole-batch gradient (what
an all-reduce between the copies would produce).  The parity check compares that sum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..lower import COMPUTE, RECV, SEND, Message, lower, messages
from ..plan import Op, Plan, ops_of
from .emulation import padded
from .model import loss_fn, make_batch, make_chunk
from .options import LiveOptions
from .saved import SavedBytes
from .transport import make_transport
from .worker import RUNNING, set_status


@dataclass(frozen=True)
class RankJob:
    """Everything one run of the executor needs (pickled to every worker)."""

    plan: Plan
    options: LiveOptions
    durations: list[list[float]] | None = None   # per rank, per step: emulated seconds (None: no emulation)


def check_cuda() -> None:
    if not torch.cuda.is_available():
        raise ValueError("device cuda: no CUDA device is visible to this process (this torch build or machine "
                         "has none)")


def select_device(device: str, rank: int) -> torch.device:
    """The torch device for ``rank``: CPU, or one GPU per rank (round-robin over the visible GPUs)."""
    if device == "cpu":
        return torch.device("cpu")
    check_cuda()
    dev = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    return dev


def plan_worker(rank: int, world_size: int, job: RankJob) -> dict:
    """Launcher target: run rank ``rank`` of ``job.plan``; return its spans, gradients and losses."""
    if world_size != job.plan.p:
        raise ValueError(f"the plan has {job.plan.p} ranks but the job has {world_size} processes")
    # autograd imports this (and sympy) on the first backward given an explicit gradient: seconds on a busy
    # laptop, which would land inside the first measured B.  Already loaded when forked by the zygote.
    import torch.fx.experimental.symbolic_shapes  # noqa: F401
    return Executor(rank, job).run()


class Executor:
    def __init__(self, rank: int, job: RankJob):
        self.rank, self.job, self.plan = rank, job, job.plan
        plan, opts = self.plan, job.options
        self.cfg = opts.model
        self.dev = select_device(opts.device, rank)
        self.chunk_of = plan.chunk_of_stage()
        self.split = plan.split_backward
        self.m = plan.m
        self.actions = lower(plan)[rank]
        self.recvs = [a for a in self.actions if a.kind == RECV]
        mine = {op for step in plan.ranks[rank] for op in ops_of(step)}
        between = messages(plan)
        self.into = {msg.consumer: msg for msg in between if msg.consumer in mine}      # op -> the tensor it takes
        self.out_of = {msg.producer: msg for msg in between if msg.producer in mine}    # op -> the tensor it gives
        sent = {a.message for a in self.actions if a.kind == SEND}
        self.local = {msg for msg in self.out_of.values() if msg not in sent}           # consumed on this rank
        self.modules = {s: make_chunk(self.chunk_of[s], plan.chunks, self.cfg).to(self.dev)
                        for s in plan.placement[rank]}
        x, y = make_batch(self.cfg, self.m)
        # one storage per micro-batch (not views of the batch): what autograd saves of them is that micro-batch's
        self.inputs = [c.clone() for c in x.to(self.dev).chunk(self.m)]
        self.targets = [c.clone() for c in y.to(self.dev).chunk(self.m)]
        self.saved_bytes = SavedBytes([q for mod in self.modules.values() for q in mod.parameters()])
        self.saved_curve: list[tuple] = []               # (seconds, bytes saved for the backward) after each step
        self.saved_peak = 0
        self.origin = 0.0                                # the iteration's common start (perf_counter)
        self.transport = make_transport(opts, (self.cfg.rows, self.cfg.width), self.dev, self.now)
        self.compute = self.run_step
        if job.durations is not None:
            self.compute = padded(self.run_step, dict(zip(plan.ranks[rank], job.durations[rank])))
        self.values: dict[Message, torch.Tensor] = {}    # tensors between stages: produced or received, not taken
        self.saved: dict[tuple, tuple] = {}              # (mb, stage) -> what backward needs
        self.for_w: dict[tuple, list] = {}               # (mb, stage) -> [(z, linear, dz)] for W
        self.losses: dict[int, float] = {}

    def now(self) -> float:
        """Seconds since the iteration's common start."""
        return time.perf_counter() - self.origin

    # ---- tensors between stages ----------------------------------------------------------------------
    def give(self, op: Op, tensor: torch.Tensor) -> None:
        """Keep what ``op`` hands to another stage until a SEND (or, on this rank, its consumer) takes it."""
        msg = self.out_of[op]
        self.values[msg] = tensor.clone() if msg in self.local else tensor

    def take(self, op: Op) -> torch.Tensor | None:
        """The tensor ``op`` takes from another stage, None when it takes none (the data, or the loss)."""
        msg = self.into.get(op)
        return None if msg is None else self.values.pop(msg)

    # ---- the three op kinds ----------------------------------------------------------------------
    def forward(self, op: Op) -> None:
        x = self.take(op)
        x = self.inputs[op.mb] if x is None else x.detach().requires_grad_()
        trace = [] if self.split else None
        last = op not in self.out_of                         # nobody takes its output: it ends the route
        with self.saved_bytes.hooks():                       # count what this forward saves for its backward
            y = self.modules[op.stage](x, trace)
            if last:
                loss = loss_fn(y, self.targets[op.mb]) / self.m   # batch loss = mean of the M micro-batch losses
        if last:
            self.losses[op.mb] = loss.item() * self.m
            self.saved[(op.mb, op.stage)] = (x, loss, trace)
        else:
            self.saved[(op.mb, op.stage)] = (x, y, trace)
            self.give(op, y.detach())

    def backward(self, op: Op) -> None:
        grad = self.take(op)                                 # None on the last stage: out is the loss
        x, out, trace = self.saved.pop((op.mb, op.stage))
        wrt_x = [x] if op in self.out_of else []             # the stage before waits for the input gradient
        if self.split:
            # B: gradients at the stage input and at every Linear output z; keep the graph for W.
            zs = [z for z, _ in trace]
            grads = torch.autograd.grad(out, wrt_x + zs, grad, retain_graph=True)
            self.for_w[(op.mb, op.stage)] = [(z, lin, dz) for (z, lin), dz in zip(trace, grads[len(wrt_x):])]
        else:   # full backward: parameter gradients accumulate in .grad (in place, as in plain training)
            torch.autograd.backward(out, grad, inputs=wrt_x + list(self.modules[op.stage].parameters()))
            grads = [x.grad] if wrt_x else []
        if wrt_x:
            self.give(op, grads[0])

    def weight(self, op: Op) -> None:
        for z, module, dz in self.for_w.pop((op.mb, op.stage)):
            torch.autograd.backward(z, dz, inputs=list(module.parameters()))

    def run_step(self, step) -> None:
        set_status(RUNNING, f"running {step}")
        for op in ops_of(step):
            (self.forward if op.kind == "F" else self.backward if op.kind == "B" else self.weight)(op)
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)

    # ---- the rank's loop -------------------------------------------------------------------------
    def run(self) -> dict:
        """Run the plan ``options.iterations`` times (fresh gradients each time); report the last iteration."""
        times = []
        self.warm_up()
        for _ in range(self.job.options.iterations):
            for mod in self.modules.values():
                mod.zero_grad(set_to_none=True)
            self.losses.clear()
            spans = self.iteration()
            times.append((spans[0][0], spans[-1][1]) if spans else (0.0, 0.0))
        set_status(RUNNING, "collecting gradients")
        grads = {s: [p.grad.detach().cpu() if p.grad is not None else torch.zeros_like(p, device="cpu")
                     for p in mod.parameters()] for s, mod in self.modules.items()}
        return {"rank": self.rank, "spans": spans, "grads": grads, "losses": dict(self.losses), "times": times,
                "saved_bytes": self.saved_curve, "peak_saved_bytes": self.saved_peak}

    def warm_up(self) -> None:
        """One throw-away forward and backward per stage before the clock starts: the first autograd call of a
        fresh process pays one-off costs that would otherwise land in the first measured ops."""
        for stage, mod in self.modules.items():
            if self.chunk_of[stage] == 0:                      # the first chunk takes the data (gpt: token ids)
                x = self.inputs[0]
            else:
                x = torch.zeros(self.cfg.rows, self.cfg.width, dtype=self.cfg.torch_dtype, device=self.dev,
                                requires_grad=True)
            trace = []
            y = mod(x, trace)
            wrt = ([x] if x.requires_grad else []) + [trace[0][0], *mod.parameters()]
            torch.autograd.grad(y, wrt, torch.ones_like(y))

    def iteration(self) -> list[tuple]:
        """One pass over this rank's actions; returns [(start, end, step index)] from a common time origin."""
        for action in self.recvs:         # receives the transport posts ahead (before the peers can send)
            self.transport.post(action)
        dist.barrier()                    # common time origin: every rank leaves the barrier together
        self.origin = time.perf_counter()
        meter = self.saved_bytes
        meter.peak = meter.level
        self.saved_curve = [(0.0, meter.level)]
        spans = []
        for action in self.actions:
            if action.kind == COMPUTE:
                start = self.now()
                self.compute(action.step)
                end = self.now()
                spans.append((start, end, len(spans)))
                self.saved_curve.append((end, meter.level))
            elif action.kind == SEND:
                self.transport.send(action, self.values.pop(action.message))
            else:
                self.values[action.message] = self.transport.recv(action)
        self.transport.drain()
        self.saved_peak = meter.peak
        return spans
