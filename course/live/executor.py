"""Run one rank's share of a Plan with real tensors: F, full backward, split B/W, local and remote hand-offs.

Messages.  Every tensor that crosses ranks is the input of exactly one op: the activation that F(i, s) consumes or
the gradient that B(i, s) consumes.  Its tag encodes (kind, micro-batch, consuming stage), so a receiver asks for
exactly the message its op needs and any valid order runs, whatever order the sender used (gloo honours tags;
NCCL ignores them and matches per peer in posting order, so on NCCL receives are posted at the op and the
schedule's per-pair send and receive orders must agree, as they do for the built-in schedules with one
stage per rank; NCCL with p > 1 is untested here, see benchmarks/gpu_check.sh).  In the default mode
every receive a rank will need is posted up front (irecv) and every send is an isend; ``blocking`` switches to
``send``/``recv`` posted at the op, the textbook mistake that makes 1F1B deadlock.

Backward.  A plan with W ops splits the backward: B takes gradients at the stage input and at each Linear's output
z (one autograd pass, graph kept), W then needs one small product per Linear (dW = dz^T h, db = sum dz) through
autograd on the kept graph.  Without W ops, B is the full backward.  Parameter gradients accumulate in
``.grad`` across micro-batches, exactly as in plain training.  The last stage scales its loss by 1/M.

Memory.  Each F runs under saved-tensor hooks (saved.py) that count the storages autograd keeps for the backward;
the level after every step is reported (``saved_bytes``) with its peak.  A hand-off between two stages of one
rank is copied, as a transfer from another rank would be, and every micro-batch of data is its own storage, so
what a stage keeps is its own whatever the placement.

Routes.  Micro-batch i passes ``plan.routes[i]``; the position of a stage on its route is the model chunk it
computes.  Two stages computing the same chunk (DualPipe's two directions) are two copies of that chunk with the
same initial weights; each accumulates the gradient of the micro-batches routed through it, and their sum is the
whole-batch gradient (what an all-reduce between the copies would produce).  The parity check compares that sum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..plan import Op, Plan, ops_of
from .model import loss_fn, make_batch, make_chunk
from .options import LiveOptions
from .saved import SavedBytes
from .worker import RUNNING, SLEEPING, WAITING, set_status


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
        self.cfg, self.blocking, self.latency = opts.model, opts.blocking_send, opts.latency_s
        self.dev = select_device(opts.device, rank)
        # Gloo moves CPU tensors: with GPU compute, messages are staged through host memory.
        self.comm_dev = self.dev if opts.backend == "nccl" else torch.device("cpu")
        self.rank_of = plan.rank_of_stage()
        self.chunk_of = plan.chunk_of_stage()
        self.split = plan.split_backward
        self.S, self.m = plan.num_stages, plan.m
        # The stage before and after each stage on micro-batch i's route (plans have a handful of distinct routes).
        links = {route: ({b: a for a, b in zip(route, route[1:])}, {a: b for a, b in zip(route, route[1:])})
                 for route in set(map(tuple, plan.routes))}
        self.before = [links[tuple(route)][0] for route in plan.routes]
        self.after = [links[tuple(route)][1] for route in plan.routes]
        self.modules = {s: make_chunk(self.chunk_of[s], plan.chunks, self.cfg).to(self.dev)
                        for s in plan.placement[rank]}
        x, y = make_batch(self.cfg, self.m)
        # one storage per micro-batch (not views of the batch): what autograd saves of them is that micro-batch's
        self.inputs = [c.clone() for c in x.to(self.dev).chunk(self.m)]
        self.targets = [c.clone() for c in y.to(self.dev).chunk(self.m)]
        self.saved_bytes = SavedBytes([q for mod in self.modules.values() for q in mod.parameters()])
        # When emulating, every message carries one extra row whose first entry is the time it was sent, so the
        # receiver can hold its op until send time + latency, as the simulator does.
        self.stamped = job.durations is not None
        self.shape = (self.cfg.rows + self.stamped, self.cfg.width)
        self.t_ref = 0.0
        self.local: dict[tuple, torch.Tensor] = {}      # hand-offs between stages of this rank
        self.posted: dict[tuple, tuple] = {}             # pre-posted receives: key -> (work, buffer)
        self.outbox: list[tuple] = []                    # this step's remote outputs: (key, buffer, op)
        self.sends: list[tuple] = []                     # outstanding isends: (work, buffer)
        self.saved: dict[tuple, tuple] = {}              # (mb, stage) -> what backward needs
        self.for_w: dict[tuple, list] = {}               # (mb, stage) -> [(z, linear, dz)] for W
        self.losses: dict[int, float] = {}

    # ---- routes and messages ---------------------------------------------------------------------
    def neighbour(self, mb: int, stage: int, step: int) -> int | None:
        """The stage before (step=-1) or after (+1) ``stage`` on micro-batch ``mb``'s route, None at an end."""
        return (self.before if step < 0 else self.after)[mb].get(stage)

    def tag(self, key: tuple) -> int:
        kind, mb, stage = key
        return (mb * self.S + stage) * 2 + (kind == "B")

    @staticmethod
    def describe(key: tuple) -> str:
        kind, mb, stage = key
        return f"the activation for F{mb}.s{stage}" if kind == "F" else f"the gradient for B{mb}.s{stage}"

    def source(self, key: tuple) -> int | None:
        """Rank that sends message ``key``, or None when it comes from this rank or from the data."""
        kind, mb, stage = key
        other = self.neighbour(mb, stage, -1 if kind == "F" else +1)
        if other is None or self.rank_of[other] == self.rank:
            return None
        return self.rank_of[other]

    def incoming(self) -> list[tuple]:
        """Keys of all remote messages this rank receives, in the order its ops need them."""
        keys = []
        for step in self.plan.ranks[self.rank]:
            for op in ops_of(step):
                key = (op.kind, op.mb, op.stage)
                if op.kind in "FB" and self.source(key) is not None:
                    keys.append(key)
        return keys

    def post(self, key: tuple) -> None:
        buf = torch.empty(self.shape, dtype=self.cfg.torch_dtype, device=self.comm_dev)
        self.posted[key] = (dist.irecv(buf, self.source(key), tag=self.tag(key)), buf)

    def receive(self, key: tuple, op: Op) -> torch.Tensor:
        if key in self.local:   # copied, as a transfer from another rank would be: each stage owns its input
            return self.local.pop(key).clone()
        src = self.source(key)
        what = f"{op}: blocked in recv of {self.describe(key)} from rank {src} (tag {self.tag(key)})"
        if self.blocking:
            buf = torch.empty(self.shape, dtype=self.cfg.torch_dtype, device=self.comm_dev)
            set_status(WAITING, what)
            dist.recv(buf, src, tag=self.tag(key))
        else:
            if key not in self.posted:
                self.post(key)
            work, buf = self.posted.pop(key)
            set_status(WAITING, what)
            work.wait()
        set_status(RUNNING, f"running {op}")
        if self.stamped:
            ready = buf[0, 0].item() + self.latency - (time.perf_counter() - self.t_ref)
            if ready > 0:
                set_status(SLEEPING, f"{op}: {self.describe(key)} is in flight (emulated latency)")
                time.sleep(ready)
            buf = buf[1:].clone()   # its own storage: the time stamp row is not part of the activation
        return buf.to(self.dev)

    def deliver(self, key: tuple, tensor: torch.Tensor, op: Op) -> None:
        """Hand ``tensor`` to the op that consumes it: at once on this rank, at the end of the step otherwise."""
        if self.rank_of[key[2]] == self.rank:
            self.local[key] = tensor
        else:
            self.outbox.append((key, tensor.detach().to(self.comm_dev).contiguous(), op))

    def flush(self) -> None:
        """Send the step's outputs.  After the emulated duration, so a consumer cannot start early."""
        for key, buf, op in self.outbox:
            dst = self.rank_of[key[2]]
            if self.stamped:
                buf = torch.cat([torch.full_like(buf[:1], time.perf_counter() - self.t_ref), buf])
            if self.blocking:
                set_status(WAITING, f"{op}: blocked in send of {self.describe(key)} to rank {dst} "
                                    f"(tag {self.tag(key)})")
                dist.send(buf, dst, tag=self.tag(key))
                set_status(RUNNING, f"ran {op}")
            else:
                self.sends.append((dist.isend(buf, dst, tag=self.tag(key)), buf))
        self.outbox.clear()

    # ---- the three op kinds ----------------------------------------------------------------------
    def inputs_of(self, op: Op):
        """Receive what ``op`` consumes (before its span starts: waiting is not computing)."""
        if op.kind == "F":
            if self.neighbour(op.mb, op.stage, -1) is None:
                return self.inputs[op.mb]
            return self.receive(("F", op.mb, op.stage), op).detach().requires_grad_()
        if op.kind == "B" and self.neighbour(op.mb, op.stage, +1) is not None:
            return self.receive(("B", op.mb, op.stage), op)
        return None

    def forward(self, op: Op, x: torch.Tensor) -> None:
        trace = [] if self.split else None
        with self.saved_bytes.hooks():                       # count what this forward saves for its backward
            y = self.modules[op.stage](x, trace)
            nxt = self.neighbour(op.mb, op.stage, +1)
            if nxt is None:
                loss = loss_fn(y, self.targets[op.mb]) / self.m   # batch loss = mean of the M micro-batch losses
        if nxt is None:
            self.losses[op.mb] = loss.item() * self.m
            self.saved[(op.mb, op.stage)] = (x, loss, trace)
        else:
            self.saved[(op.mb, op.stage)] = (x, y, trace)
            self.deliver(("F", op.mb, nxt), y.detach(), op)

    def backward(self, op: Op, grad: torch.Tensor | None) -> None:
        x, out, trace = self.saved.pop((op.mb, op.stage))
        prev = self.neighbour(op.mb, op.stage, -1)
        wrt_x = [x] if prev is not None else []
        if self.split:
            # B: gradients at the stage input and at every Linear output z; keep the graph for W.
            zs = [z for z, _ in trace]
            grads = torch.autograd.grad(out, wrt_x + zs, grad, retain_graph=True)
            self.for_w[(op.mb, op.stage)] = [(z, lin, dz) for (z, lin), dz in zip(trace, grads[len(wrt_x):])]
        else:   # full backward: parameter gradients accumulate in .grad (in place, as in plain training)
            torch.autograd.backward(out, grad, inputs=wrt_x + list(self.modules[op.stage].parameters()))
            grads = [x.grad] if wrt_x else []
        if prev is not None:
            self.deliver(("B", op.mb, prev), grads[0], op)

    def weight(self, op: Op) -> None:
        for z, module, dz in self.for_w.pop((op.mb, op.stage)):
            torch.autograd.backward(z, dz, inputs=list(module.parameters()))

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
                x = torch.zeros(self.shape[0] - self.stamped, self.cfg.width, dtype=self.cfg.torch_dtype,
                                device=self.dev, requires_grad=True)
            trace = []
            y = mod(x, trace)
            wrt = ([x] if x.requires_grad else []) + [trace[0][0], *mod.parameters()]
            torch.autograd.grad(y, wrt, torch.ones_like(y))

    def iteration(self) -> list[tuple]:
        """One pass over this rank's steps; returns [(start, end, step index)] from a common time origin."""
        steps = self.plan.ranks[self.rank]
        durations = self.job.durations[self.rank] if self.job.durations else None
        if not self.blocking and self.job.options.backend != "nccl":
            for key in self.incoming():   # NCCL ignores tags and serialises per peer: post at the op instead
                self.post(key)
        dist.barrier()                    # common time origin: every rank leaves the barrier together
        self.t_ref = t_ref = time.perf_counter()
        spans = []
        meter = self.saved_bytes
        meter.peak = meter.level
        self.saved_curve = [(0.0, meter.level)]       # (seconds, bytes saved for the backward) after each step
        for i, step in enumerate(steps):
            ops = ops_of(step)
            set_status(RUNNING, f"running {step}")
            got = [self.inputs_of(op) for op in ops]
            start = time.perf_counter()
            for op, value in zip(ops, got):
                if op.kind == "F":
                    self.forward(op, value)
                elif op.kind == "B":
                    self.backward(op, value)
                else:
                    self.weight(op)
            if self.dev.type == "cuda":
                torch.cuda.synchronize(self.dev)
            if durations is not None:
                left = start + durations[i] - time.perf_counter()
                if left > 0:
                    set_status(SLEEPING, f"{step}: padding to its modelled duration")
                    time.sleep(left)
            self.saved_curve.append((time.perf_counter() - t_ref, meter.level))
            self.flush()
            spans.append((start - t_ref, time.perf_counter() - t_ref, i))
        set_status(WAITING, "all steps done: waiting for outstanding sends to be received")
        for work, _ in self.sends:
            work.wait()
        self.sends.clear()
        self.saved_peak = meter.peak
        return spans
