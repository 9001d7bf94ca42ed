"""Checks of the live 1F1B exercise: the learner's ``train_step`` on real processes, judged from what crossed
between them.

Three pieces, with plain data or a trusted record between them:

- ``check_pipeline_step`` opens a relay (course/live/relay.py) where the verdict is given (the judge's checker, or
  the notebook's kernel) and asks for the job where the learner's code lives (``in_learner``).
- ``record_pipeline_step`` runs the job: one worker per rank builds its stage (``course.live.model``'s seeded
  ``Chunk``, one Linear + Tanh block), makes the relay its process group (every send and receive goes through it,
  every collective is refused), hooks the stage so that each forward and backward is logged with digests of its
  input, output and gradients, and calls ``train_step``.  Each rank returns lists, dicts, strings and floats only.
- ``judge_pipeline_record`` computes the single-process reference itself and checks, from the relay's own record:
  that every rank joined from a process of its own, that exactly m activations went from rank r to r+1 and m
  gradients back, nothing else, each equal to the reference's, and each posted only after what 1F1B makes it wait
  for had been received; from the ranks' records (made in the learner's processes: best effort), the forwards
  and backwards in 1F1B order on the received tensors; and the parameter gradients and the loss against the
  reference.

A record forged in the learner's process cannot pass: without traffic through the relay there is nothing to judge.
What stays best effort: which computation inside a rank produced what it sent (the ranks run the learner's code,
and processes on one machine can exchange data by other ways), and the order of a rank's own forwards and
backwards where no message shows it (the hooks that log it run next to the learner's code).
"""

from __future__ import annotations

import hashlib
import os

from course.checks import CheckFailed, assert_tensor_close, in_learner, show
from course.i18n import tr
from course.live.relay import Relay

WIDTH, ROWS = 8, 3          # the exercise's activations: ROWS x WIDTH float64 per micro-batch
_DEADLOCK_HINT = ("  提示 (hint): 每个 send 都要有对应的 recv；两个相邻的 rank 都先做阻塞的 (blocking) send "
                  "会互相等待。办法之一：发送用 dist.isend，在这一步结束前 wait()。",
                  "  hint: every send needs its recv; two neighbouring ranks that both start with a blocking send wait "
                  "for each other.  One way out: send with dist.isend and wait() before the step ends.")


class LearnerError(RuntimeError):
    """An exception raised inside the learner's code in a worker process (its traceback is in the message)."""


def check_pipeline_step(train_step, world_size: int, m: int, seed: int, timeout: float = 30.0) -> None:
    """Run ``train_step`` on ``world_size`` processes and judge what crossed between them.  The job runs where the
    learner's code lives (in the judge: its learner process, via ``in_learner``; in a notebook: here); the relay
    that carries its messages, and the verdict, stay here (in the judge: the checker; ``COURSE_RELAY_DIR`` says
    where the learner's processes can reach its socket)."""
    with Relay(world_size, os.environ.get("COURSE_RELAY_DIR")) as relay:
        records = in_learner("course.live_checks:record_pipeline_step", train_step, world_size, m, seed, timeout,
                             relay.address)
    judge_pipeline_record(records, relay.record, world_size, m, seed)


# ---- the record (in the learner's processes) -------------------------------------------------------------------

def record_pipeline_step(train_step, world_size: int, m: int, seed: int, timeout: float, relay: str) -> list[dict]:
    """Each rank's record of one ``train_step`` (plain data), its messages through the relay at ``relay``.  A
    deadlock or a job slower than ``timeout`` fails with a clear message and no worker survives; an exception in
    the learner's code becomes a LearnerError."""
    from course.live import launcher  # torch only when a live check runs

    try:
        return launcher.launch(_record_rank, world_size, (train_step, m, seed, relay), timeout, backend=None,
                               echo=False)
    except launcher.JobTimeout as e:
        kind = (tr("死锁 (deadlock)", "deadlock") if isinstance(e, launcher.DeadlockDetected) else
                tr(f"超时 (timeout, {timeout:g} s)", f"timeout ({timeout:g} s)"))
        raise CheckFailed(tr(f"{kind}：作业没有完成，已终止所有进程 (killed)。各 rank 当时在做什么：\n{e}\n",
                             f"{kind}: the job did not finish, every process was killed.  What each rank was doing:"
                             f"\n{e}\n") + tr(*_DEADLOCK_HINT)) from None
    except launcher.WorkerError as e:
        if e.exc_type == "NotImplementedError":   # the starter as given: the judge's "not implemented yet" line
            raise NotImplementedError(f"train_step (rank {e.rank})") from None
        raise LearnerError(str(e)[-3000:]) from None


def pipeline_problem(world_size: int, m: int, seed: int):
    """The stages (one seeded Linear + Tanh chunk per rank), the m micro-batches and their targets."""
    from course.live.model import Chunk, ModelConfig, make_batch

    cfg = ModelConfig(width=WIDTH, blocks_per_stage=1, microbatch_size=ROWS, seed=seed)
    x, y = make_batch(cfg, m)
    return ([Chunk(k, cfg) for k in range(world_size)], [t.clone() for t in x.split(ROWS)],
            [t.clone() for t in y.split(ROWS)])


def digest(tensor) -> str:
    """Shape, dtype and a hash of the bytes: equal digests mean bitwise-equal tensors."""
    t = tensor.detach().cpu().contiguous()
    return f"{tuple(t.shape)}/{t.dtype}/" + hashlib.sha256(t.numpy().tobytes()).hexdigest()[:20]


def _record_rank(rank: int, world_size: int, train_step, m: int, seed: int, relay_address: str) -> dict:
    """The launcher's target: this rank's stage, hooked, on the relay's process group; then ``train_step``."""
    import torch
    import torch.distributed as dist

    from course.live import relay

    relay.join(relay_address, rank, world_size)
    group = dist.distributed_c10d._get_default_group()
    stages, inputs, targets = pipeline_problem(world_size, m, seed)
    stage = stages[rank]
    events, forwards, backwards = [], [], []

    def on_forward(module, args, output):
        k = len(forwards)
        x = args[0] if args and isinstance(args[0], torch.Tensor) else None
        entry = {"mb": k, "input": digest(x) if x is not None else None, "output": digest(output),
                 "input_grad": None}
        forwards.append(entry)
        events.append(["F", k])
        if x is not None and x.requires_grad:
            x.register_hook(lambda grad: entry.__setitem__("input_grad", digest(grad)))
        if output.requires_grad:
            def on_backward(grad):
                backwards.append({"mb": k, "output_grad": digest(grad)})
                events.append(["B", k])
            output.register_hook(on_backward)

    handle = stage.register_forward_hook(on_forward)
    try:
        loss = train_step(stage, rank, world_size, m, (ROWS, WIDTH), inputs if rank == 0 else None,
                          targets if rank == world_size - 1 else None, torch.nn.functional.mse_loss)
    except BaseException:
        if not group.refused:
            raise
        loss = None   # a refused collective is the verdict, whatever the learner's code made of the exception
    finally:
        handle.remove()
    return {"events": events, "forwards": forwards, "backwards": backwards, "refused": list(group.refused),
            "loss": loss if type(loss) in (float, type(None)) else f"<{type(loss).__name__}>",
            "grads": [None if q.grad is None else [str(q.grad.dtype), q.grad.tolist()] for q in stage.parameters()]}


# ---- the verdict (trusted side) --------------------------------------------------------------------------------

def one_f_one_b(world_size: int, rank: int, m: int) -> list[list]:
    """Rank ``rank``'s forwards and backwards in 1F1B order, as the course's schedule has them: [["F", 0], ...]."""
    from course.schedules import build

    return [[op.kind, op.mb] for op in build("1f1b", world_size, m).ranks[rank]]


def judge_pipeline_record(records, relayed, world_size: int, m: int, seed: int) -> None:
    """Fail with the first thing the job did wrong: ``relayed`` is the relay's record (trusted), ``records`` the
    ranks' own (one per rank, from ``record_pipeline_step``)."""
    try:
        _judge(records, relayed, world_size, m, seed)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:   # a record not made by our harness
        raise CheckFailed(tr(f"记录 (record) 的格式不对 (malformed): {type(e).__name__}",
                             f"a malformed record: {type(e).__name__}")) from None


def _judge(records, relayed, world_size: int, m: int, seed: int) -> None:
    what = f"p={world_size}, m={m}, seed={seed}"
    if relayed.violation:
        raise CheckFailed(tr(f"通信不合规则 (the relay refused the traffic): {relayed.violation} ({what})",
                             f"the relay refused the traffic: {relayed.violation} ({what})"))
    if sorted(relayed.pids) != list(range(world_size)):
        raise CheckFailed(tr(f"只有 rank {sorted(relayed.pids)} 通过进程组通信 (only these of {world_size} ranks "
                             f"joined the process group) ({what})：每个 rank 都要在自己的进程里运行 train_step",
                             f"only ranks {sorted(relayed.pids)} of {world_size} joined the process group ({what}): "
                             "every rank must run train_step in a process of its own"))
    if type(records) is not list or len(records) != world_size or any(type(r) is not dict for r in records):
        raise CheckFailed(tr(f"记录 (record) 的格式不对：期望 {world_size} 个 dict，得到 {show(records)}",
                             f"a malformed record: expected {world_size} dicts, got {show(records)}"))
    ref = _reference(world_size, m, seed)
    for rank, rec in enumerate(records):
        _judge_hooks_order(rank, rec, world_size, m, what)
    streams = _relayed_streams(relayed, world_size, what)
    for rank in range(world_size):
        _judge_messages(rank, streams, ref, world_size, m, what)
    for rank in range(world_size):
        _judge_causality(rank, streams, world_size, m, what)
    for rank, rec in enumerate(records):
        _judge_stage_inputs(rank, rec, streams, ref, world_size, m, what)
        _judge_gradients(rank, rec["grads"], list(ref["stages"][rank].parameters()), m, what)
    last = records[-1]["loss"]
    if type(last) is not float or abs(last - ref["loss"]) > 1e-7 * abs(ref["loss"]) + 1e-12:
        raise CheckFailed(tr(f"最后一个 rank 应返回整个 batch 的 loss (float) {ref['loss']!r}，得到 {show(last)} "
                             f"({what})",
                             f"the last rank should return the whole batch's loss (a float) {ref['loss']!r}, got "
                             f"{show(last)} ({what})"))


def _reference(world_size: int, m: int, seed: int) -> dict:
    """The single-process step, micro-batch by micro-batch: each stage's output and the gradient of the batch loss
    (the mean over micro-batches) with respect to each stage's input; parameter gradients accumulate in the
    stages."""
    from course.live.model import loss_fn

    stages, inputs, targets = pipeline_problem(world_size, m, seed)
    outputs = [[None] * m for _ in range(world_size)]
    input_grads = [[None] * m for _ in range(world_size)]
    total = 0.0
    for k in range(m):
        xs, ys, x = [], [], inputs[k]
        for r, stage in enumerate(stages):
            x = x.detach().requires_grad_(r > 0)
            y = stage(x)
            xs.append(x)
            ys.append(y)
            outputs[r][k] = y.detach()
            x = y
        loss = loss_fn(ys[-1], targets[k]) / m
        total += loss.item()
        grad = None
        for r in reversed(range(world_size)):
            loss.backward() if r == world_size - 1 else ys[r].backward(grad)
            if r > 0:
                grad = input_grads[r][k] = xs[r].grad
    return {"stages": stages, "inputs": inputs, "outputs": outputs, "input_grads": input_grads, "loss": total}


def _labels(rank: int, world_size: int) -> dict:
    """This rank's four streams: (src, dst) -> (the step whose data it carries, what it carries)."""
    streams = {
        (rank - 1, rank): ("F", tr("从上一个 rank 收到的激活 (activation)",
                                   "activation received from the rank before")),
        (rank, rank + 1): ("F", tr("发给下一个 rank 的激活 (activation)", "activation sent to the next rank")),
        (rank + 1, rank): ("B", tr("从下一个 rank 收到的梯度 (gradient)", "gradient received from the next rank")),
        (rank, rank - 1): ("B", tr("发给上一个 rank 的梯度 (gradient)", "gradient sent to the rank before")),
    }
    return {key: v for key, v in streams.items() if 0 <= key[0] < world_size and 0 <= key[1] < world_size}


def _relayed_streams(relayed, world_size: int, what: str) -> dict:
    """(src, dst) -> the relay's messages from src to dst, in the order src posted them; every message and every
    receive between neighbours, shaped as the activations, and received."""
    streams: dict = {}
    shape = [ROWS, WIDTH]
    for message in relayed.messages:
        src, dst = message.src, message.dst
        if abs(src - dst) != 1:
            raise CheckFailed(tr(f"rank {src} send 了 rank {dst} ({what})：流水线里每个 rank 只和相邻的 rank "
                                 "(rank-1, rank+1) 通信", f"rank {src} sent to rank {dst} ({what}): in a pipeline each "
                                 "rank talks only to its neighbours (rank-1, rank+1)"))
        if message.shape != shape or message.dtype != "float64":
            raise CheckFailed(tr(f"rank {src} 和 rank {dst} 之间 send 了形状 (shape) {message.shape}、"
                                 f"{message.dtype} 的张量 ({what})：只传激活和梯度，形状 {shape}，float64",
                                 f"rank {src} and rank {dst} exchanged a tensor of shape {message.shape}, "
                                 f"{message.dtype} ({what}): send only activations and gradients, shape {shape}, "
                                 "float64"))
        if message.matched is None:
            raise CheckFailed(tr(f"rank {src} 发给 rank {dst} 的消息没有被接收 (never received) ({what})：每个 send "
                                 "都要有对应的 recv", f"a message from rank {src} to rank {dst} was never received "
                                 f"({what}): every send needs its recv"))
        streams.setdefault((src, dst), []).append(message)
    for receive in relayed.receives:
        if receive.matched is None:
            raise CheckFailed(tr(f"rank {receive.rank} 从 rank {receive.src} 的 recv 没有等到消息 (nothing was sent "
                                 f"for it) ({what})", f"rank {receive.rank}'s recv from rank {receive.src} got "
                                 f"nothing: nothing was sent for it ({what})"))
    return streams


def _tensor(message):
    import torch

    return torch.frombuffer(bytearray(message.data), dtype=torch.uint8).view(torch.float64).reshape(message.shape)


def _relayed_digest(message) -> str:
    """``digest`` of the tensor the message carried (the same bytes)."""
    return f"{tuple(message.shape)}/torch.{message.dtype}/" + hashlib.sha256(message.data).hexdigest()[:20]


def _judge_messages(rank: int, streams: dict, ref: dict, world_size: int, m: int, what: str) -> None:
    """Exactly m messages on each of this rank's streams, and what it sent equal to the reference's."""
    for (src, dst), (step, label) in _labels(rank, world_size).items():
        got = streams.get((src, dst), [])
        if len(got) != m:
            raise CheckFailed(tr(f"rank {rank}: {label}有 {len(got)} 个，应该正好 m = {m} 个 ({what})",
                                 f"rank {rank}: {len(got)} of '{label}', exactly m = {m} expected ({what})"))
        if src != rank:
            continue
        expected = ref["outputs"][rank] if step == "F" else ref["input_grads"][rank]
        for k, message in enumerate(got):
            name = (tr("forward 的输出 (stage output)", "stage output") if step == "F" else
                    tr("micro-batch 输入的梯度 (x.grad)", "gradient of the micro-batch's input (x.grad)"))
            assert_tensor_close(_tensor(message), expected[k],
                                tr(f"rank {rank} 第 {k} 个{label} ({what})",
                                   f"rank {rank}'s {label} number {k} ({what})"),
                                tr(f"应该是第 {k} 个 micro-batch 的 {name}：micro-batch 按 0, 1, 2, ... 的顺序，loss "
                                   "要除以 m",
                                   f"it should be micro-batch {k}'s {name}: micro-batches in the order 0, 1, 2, ..., "
                                   "the loss divided by m"),
                                atol=1e-9, rtol=1e-7)


def _judge_causality(rank: int, streams: dict, world_size: int, m: int, what: str) -> None:
    """On the relay's clock: every message this rank sent was posted after every message that 1F1B has it
    receive before the step that produced it (a later posting is fine; an earlier one is not 1F1B)."""
    labels = _labels(rank, world_size)
    waited, by = -1, None
    for kind, k in one_f_one_b(world_size, rank, m):
        incoming = (rank - 1, rank) if kind == "F" else (rank + 1, rank)
        if incoming in labels:
            delivered = streams[incoming][k].matched
            if delivered > waited:
                waited, by = delivered, (labels[incoming][1], k)
        outgoing = (rank, rank + 1) if kind == "F" else (rank, rank - 1)
        if outgoing in labels and streams[outgoing][k].posted < waited:
            raise CheckFailed(tr(f"rank {rank} 发出第 {k} 个{labels[outgoing][1]}时，还没收到第 {by[1]} 个{by[0]} "
                                 f"({what})：1F1B 里 {kind}{k} 在用到它的那一步之后 (not in 1F1B order)",
                                 f"rank {rank} posted its {labels[outgoing][1]} number {k} before it had received "
                                 f"{by[0]} number {by[1]} ({what}): in 1F1B, {kind}{k} comes after the step that "
                                 "needs it (not in 1F1B order)"))


def _judge_hooks_order(rank: int, rec: dict, world_size: int, m: int, what: str) -> None:
    """The rank's own log (best effort): no refused collective, forwards and backwards in 1F1B order."""
    if rec["refused"]:
        raise CheckFailed(tr(f"rank {rank} 调用了集合通信 (collective) {rec['refused'][0]} ({what})：流水线 "
                             "(pipeline) 只在相邻 stage 之间 send/recv 激活和梯度；"
                             "不能 all_gather 权重、在每个 rank 上算整个模型",
                             f"rank {rank} called the collective {rec['refused'][0]} ({what}): a pipeline "
                             "only sends and receives activations and gradients between neighbouring stages; it may "
                             "not all_gather the weights and compute the whole model on every rank"))
    order = [e[:2] for e in rec["events"] if e[0] in ("F", "B")]
    expected = one_f_one_b(world_size, rank, m)
    if order != expected:
        text = lambda seq: " ".join(f"{k}{i}" for k, i in seq)  # noqa: E731
        raise CheckFailed(tr(f"rank {rank} 的 forward/backward 顺序不是 1F1B ({what})：\n  期望 (expected) "
                             f"{text(expected)}\n  得到 (got)      {text(order)}\n  提示 (hint): rank r 先做 "
                             "min(p-r-1, m) 个 forward，再一个 forward 一个 backward 交替，最后做完剩下的 backward",
                             f"rank {rank}'s forwards and backwards are not in 1F1B order ({what}):\n  expected "
                             f"{text(expected)}\n  got      {text(order)}\n  hint: rank r first runs min(p-r-1, m) "
                             "forwards, then alternates one forward and one backward, then runs the backwards left"))


def _judge_stage_inputs(rank: int, rec: dict, streams: dict, ref: dict, world_size: int, m: int, what: str) -> None:
    """The rank's log against the relay: each forward ran on the tensor received for its micro-batch, each
    backward started from the gradient received for it."""
    fwd = {f["mb"]: f for f in rec["forwards"]}
    bwd = {b["mb"]: b for b in rec["backwards"]}
    for k in range(m):
        received = digest(ref["inputs"][k]) if rank == 0 else _relayed_digest(streams[rank - 1, rank][k])
        if fwd[k]["input"] != received:
            source = f"inputs[{k}]" if rank == 0 else tr(f"第 {k} 个从上一个 rank 收到的激活 (activation)",
                                                         f"activation number {k} received from the rank before")
            raise CheckFailed(tr(f"rank {rank} 第 {k} 个 forward 的输入 (stage input) 不是 {source} ({what})：stage 要"
                                 "直接用收到的张量 (the received tensor) 做 forward",
                                 f"the input of rank {rank}'s forward number {k} is not {source} ({what}): the stage "
                                 "must run its forward on the received tensor itself"))
        if rank < world_size - 1 and bwd[k]["output_grad"] != _relayed_digest(streams[rank + 1, rank][k]):
            raise CheckFailed(tr(f"rank {rank} 第 {k} 个 backward 用的输出梯度 (output gradient) 不是第 {k} 个从 rank "
                                 f"{rank + 1} 收到的梯度 ({what})", f"the output gradient of rank {rank}'s backward "
                                 f"number {k} is not gradient number {k} received from rank {rank + 1} ({what})"))


def _judge_gradients(rank: int, grads, params: list, m: int, what: str) -> None:
    """The stage's parameter gradients against the single-process reference's."""
    import torch

    for k, (got, param) in enumerate(zip(grads, params, strict=True)):
        if got is None:
            raise CheckFailed(tr(f"rank {rank} 的参数 {k} 没有梯度 (grad is None) ({what})："
                                 "backward 没有做到这个 stage",
                                 f"rank {rank}'s parameter {k} has no gradient (grad is None) ({what}): the backward "
                                 "never reached this stage"))
        want = param.grad
        tensor = torch.tensor(got[1], dtype=getattr(torch, got[0].removeprefix("torch."), torch.float64))
        scale = want.abs().max().item()
        ratio = tensor.abs().max().item() / scale if scale else None
        hint = (tr("loss 要除以 m (loss scaling)：整个 batch 的 loss 是各 micro-batch loss 的平均",
                   "divide the loss by m (loss scaling): the batch's loss is the mean of the micro-batches' losses")
                if ratio and abs(ratio - m) < 1e-3 * m else
                tr("对照单进程的参考梯度：send/recv 的是不是对应的 micro-batch？梯度有没有传回上一个 stage？",
                   "compared with the single-process reference: do the sends and receives carry the matching "
                   "micro-batch?  Does the gradient go back to the stage before?"))
        assert_tensor_close(tensor, want, tr(f"rank {rank} 参数 {k} 的梯度 (gradient) ({what})",
                                             f"the gradient of rank {rank}'s parameter {k} ({what})"), hint,
                            atol=1e-9, rtol=1e-7)
