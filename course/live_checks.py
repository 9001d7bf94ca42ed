"""Checks of the live 1F1B exercise: the learner's ``train_step`` on real gloo processes, judged from a record.

Two halves with plain data between them:

- ``record_pipeline_step`` runs the job: one worker per rank builds its stage (``course.live.model``'s seeded
  ``Chunk``, one Linear + Tanh block), wraps the process group so that every point-to-point send and receive is
  recorded (peer, shape, dtype, a digest of the data) and every collective is refused, hooks the stage so that each
  forward and backward is logged with digests of its input, output and gradients, and calls ``train_step``.
  Each rank returns lists, dicts, strings and floats only.
- ``judge_pipeline_record`` computes the single-process reference itself and checks the record: exactly m
  activations from rank r-1 and m gradients from rank r+1 (and m of each sent on), nothing else exchanged, the
  forwards and backwards in 1F1B order, every stage input equal to the tensor received for that micro-batch (rank 0:
  the micro-batch itself), every tensor sent equal to the stage's output or input gradient, the parameter gradients
  and the batch loss equal to the reference.

The recording runs inside the learner's worker processes, next to the learner's code: it is best effort.  It stops
the honest mistake and the easy shortcut (gather the weights and run the whole model on every rank, replay the
hook order on dummy inputs); code determined to unwrap it can.  What the judge compares, it computes itself.
"""

from __future__ import annotations

import hashlib

from course.checks import CheckFailed, assert_tensor_close, in_learner, show

WIDTH, ROWS = 8, 3          # the exercise's activations: ROWS x WIDTH float64 per micro-batch
_P2P = ("send", "recv")
_COLLECTIVES = ("allgather", "allgather_coalesced", "allgather_into_tensor_coalesced", "_allgather_base",
                "all_gather_single", "all_gather_single_coalesced", "allreduce", "allreduce_coalesced", "alltoall",
                "alltoall_base", "all_to_all_single", "barrier", "monitored_barrier", "broadcast", "gather", "reduce",
                "reduce_scatter", "_reduce_scatter_base", "reduce_scatter_single", "reduce_scatter_single_coalesced",
                "reduce_scatter_tensor_coalesced", "scatter", "recv_anysource")
_DEADLOCK_HINT = ("  提示 (hint): 每个 send 都要有对应的 recv；两个相邻的 rank 都先做阻塞的 (blocking) send 会互相等待。"
                  "办法之一：发送用 dist.isend，在这一步结束前 wait()。")


class LearnerError(RuntimeError):
    """An exception raised inside the learner's code in a worker process (its traceback is in the message)."""


def check_pipeline_step(train_step, world_size: int, m: int, seed: int, timeout: float = 30.0) -> None:
    """Run ``train_step`` on ``world_size`` gloo processes and judge what it did.  The record is made where the
    learner's code lives (in the judge: its learner process, via ``in_learner``; in a notebook: here); the verdict
    is given here."""
    records = in_learner("course.live_checks:record_pipeline_step", train_step, world_size, m, seed, timeout)
    judge_pipeline_record(records, world_size, m, seed)


# ---- the record (in the learner's processes) -------------------------------------------------------------------

def record_pipeline_step(train_step, world_size: int, m: int, seed: int, timeout: float = 30.0) -> list[dict]:
    """Each rank's record of one ``train_step`` (plain data).  A deadlock or a job slower than ``timeout`` fails
    with a clear message and no worker survives; an exception in the learner's code becomes a LearnerError."""
    from course.live import launcher  # noqa: PLC0415  (torch only when a live check runs)

    try:
        return launcher.launch(_record_rank, world_size, (train_step, m, seed), timeout, echo=False)
    except launcher.JobTimeout as e:
        kind = "死锁 (deadlock)" if isinstance(e, launcher.DeadlockDetected) else f"超时 (timeout, {timeout:g} s)"
        raise CheckFailed(f"{kind}：作业没有完成，已终止所有进程 (killed)。各 rank 当时在做什么：\n{e}\n" + _DEADLOCK_HINT) \
            from None
    except launcher.WorkerError as e:
        if e.exc_type == "NotImplementedError":   # the starter as given: the judge's "not implemented yet" line
            raise NotImplementedError(f"train_step (rank {e.rank})") from None
        raise LearnerError(str(e)[-3000:]) from None


def pipeline_problem(world_size: int, m: int, seed: int):
    """The stages (one seeded Linear + Tanh chunk per rank), the m micro-batches and their targets."""
    from course.live.model import Chunk, ModelConfig, make_batch  # noqa: PLC0415

    cfg = ModelConfig(width=WIDTH, blocks_per_stage=1, microbatch_size=ROWS, seed=seed)
    x, y = make_batch(cfg, m)
    return ([Chunk(k, cfg) for k in range(world_size)], [t.clone() for t in x.split(ROWS)],
            [t.clone() for t in y.split(ROWS)])


def digest(tensor) -> str:
    """Shape, dtype and a hash of the bytes: equal digests mean bitwise-equal tensors."""
    t = tensor.detach().cpu().contiguous()
    return f"{tuple(t.shape)}/{t.dtype}/" + hashlib.sha256(t.numpy().tobytes()).hexdigest()[:20]


def _record_rank(rank: int, world_size: int, train_step, m: int, seed: int) -> dict:
    """The launcher's target: this rank's stage under the recording harness, then ``train_step``."""
    import torch  # noqa: PLC0415
    from torch._C import _distributed_c10d as c10d  # noqa: PLC0415

    stages, inputs, targets = pipeline_problem(world_size, m, seed)
    stage = stages[rank]
    events, forwards, backwards, refused, messages = [], [], [], [], []

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

    def p2p(kind, original):
        def call(self, tensors, peer, *rest):
            posted = []
            for t in tensors:
                posted.append([len(events), t, None])
                events.append([kind, int(peer), list(t.shape), str(t.dtype), None])
            messages.extend(posted)
            work = original(self, tensors, peer, *rest)
            for message in posted:
                message[2] = work
            return work
        return call

    def refuse(name):
        def call(self, *args, **kwargs):
            refused.append(name)
            raise RuntimeError(f"本题不能用集合通信 (collective {name} refused)：只用 send/recv/isend/irecv 和相邻的 rank 通信")
        return call

    patched = []
    for cls in (c10d.ProcessGroup, c10d.Backend, getattr(c10d, "ProcessGroupGloo", None)):
        if cls is None:
            continue
        for name in _P2P + _COLLECTIVES:
            if hasattr(cls, name):
                patched.append((cls, name, cls.__dict__.get(name)))
                setattr(cls, name, p2p(name, getattr(cls, name)) if name in _P2P else refuse(name))
    handle = stage.register_forward_hook(on_forward)
    record = {"events": events, "forwards": forwards, "backwards": backwards, "refused": refused}
    try:
        loss = train_step(stage, rank, world_size, m, (ROWS, WIDTH), inputs if rank == 0 else None,
                          targets if rank == world_size - 1 else None, torch.nn.functional.mse_loss)
    except BaseException:
        if not refused:
            raise
        loss = None   # a refused collective is the verdict, whatever the learner's code made of the exception
    finally:
        handle.remove()
        for cls, name, original in reversed(patched):
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)
    for index, tensor, work in messages:   # a receive counts once it has completed
        done = events[index][0] == "send" or (work is not None and work.is_completed())
        events[index][4] = digest(tensor) if done else None
    record["loss"] = loss if type(loss) in (float, type(None)) else f"<{type(loss).__name__}>"
    record["grads"] = [None if q.grad is None else [str(q.grad.dtype), q.grad.tolist()] for q in stage.parameters()]
    return record


# ---- the verdict (trusted side) --------------------------------------------------------------------------------

def one_f_one_b(world_size: int, rank: int, m: int) -> list[list]:
    """Rank ``rank``'s forwards and backwards in 1F1B order, as the course's schedule has them: [["F", 0], ...]."""
    from course.schedules import build  # noqa: PLC0415

    return [[op.kind, op.mb] for op in build("1f1b", world_size, m).ranks[rank]]


def judge_pipeline_record(records, world_size: int, m: int, seed: int) -> None:
    """Fail with the first thing ``records`` (one per rank, from ``record_pipeline_step``) did wrong."""
    try:
        _judge(records, world_size, m, seed)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:   # a record not made by our harness
        raise CheckFailed(f"记录 (record) 的格式不对 (malformed): {type(e).__name__}") from None


def _judge(records, world_size: int, m: int, seed: int) -> None:
    import torch  # noqa: PLC0415
    from course.live.model import loss_fn  # noqa: PLC0415

    what = f"p={world_size}, m={m}, seed={seed}"
    if type(records) is not list or len(records) != world_size or any(type(r) is not dict for r in records):
        raise CheckFailed(f"记录 (record) 的格式不对：期望 {world_size} 个 dict，得到 {show(records)}")
    stages, inputs, _ = reference = pipeline_problem(world_size, m, seed)
    total = sum(loss_fn(torch.nn.Sequential(*stages)(x), y) for x, y in zip(*reference[1:])) / m
    total.backward()
    streams = [_judge_rank(rank, rec, world_size, m, inputs, what) for rank, rec in enumerate(records)]
    for rank in range(world_size - 1):   # what arrived is what was sent, message by message, both ways
        for src, dst in ((rank, rank + 1), (rank + 1, rank)):
            if streams[src]["send", dst] != streams[dst]["recv", src]:
                raise CheckFailed(f"rank {dst} 从 rank {src} 收到的和 rank {src} 发出的不一致 ({what})")
    for rank, rec in enumerate(records):
        _judge_gradients(rank, rec["grads"], list(stages[rank].parameters()), m, what)
    last, ref_loss = records[-1]["loss"], total.item()
    if type(last) is not float or abs(last - ref_loss) > 1e-7 * abs(ref_loss) + 1e-12:
        raise CheckFailed(f"最后一个 rank 应返回整个 batch 的 loss (float) {ref_loss!r}，得到 {show(last)} ({what})")


def _streams(rank: int, world_size: int) -> dict:
    """This rank's message streams: (kind, peer) -> (the step each message belongs to, what it carries)."""
    streams = {("recv", rank - 1): ("F", "从上一个 rank 收到的激活 (activation)"),
               ("send", rank + 1): ("F", "发给下一个 rank 的激活 (activation)"),
               ("recv", rank + 1): ("B", "从下一个 rank 收到的梯度 (gradient)"),
               ("send", rank - 1): ("B", "发给上一个 rank 的梯度 (gradient)")}
    return {key: v for key, v in streams.items() if 0 <= key[1] < world_size}


def _judge_rank(rank: int, rec: dict, world_size: int, m: int, inputs, what: str) -> dict:
    """One rank's record: collectives, 1F1B order, its messages and what its stage computed on.  Returns the
    digests of each of its streams, (kind, peer) -> [digest of message k]."""
    if rec["refused"]:
        raise CheckFailed(f"rank {rank} 调用了集合通信 (collective) {rec['refused'][0]} ({what})：流水线 (pipeline) "
                          "只在相邻 stage 之间 send/recv 激活和梯度；不能 all_gather 权重、在每个 rank 上算整个模型")
    order = [e[:2] for e in rec["events"] if e[0] in ("F", "B")]
    expected = one_f_one_b(world_size, rank, m)
    if order != expected:
        text = lambda seq: " ".join(f"{k}{i}" for k, i in seq)  # noqa: E731
        raise CheckFailed(f"rank {rank} 的 forward/backward 顺序不是 1F1B ({what})：\n  期望 (expected) "
                          f"{text(expected)}\n  得到 (got)      {text(order)}\n  提示 (hint): rank r 先做 "
                          "min(p-r-1, m) 个 forward，再一个 forward 一个 backward 交替，最后做完剩下的 backward")
    streams = _streams(rank, world_size)
    shape = [ROWS, WIDTH]
    for kind, peer, got_shape, dtype, _ in (e for e in rec["events"] if e[0] in _P2P):
        if (kind, peer) not in streams:
            raise CheckFailed(f"rank {rank} {kind} 了 rank {peer} ({what})：流水线里每个 rank 只和相邻的 rank "
                              "(rank-1, rank+1) 通信")
        if got_shape != shape or dtype != "torch.float64":
            raise CheckFailed(f"rank {rank} 和 rank {peer} 之间 {kind} 了形状 (shape) {got_shape}、{dtype} 的张量 "
                              f"({what})：只传激活和梯度，形状 {shape}，float64")
    digests = {key: [e[4] for e in rec["events"] if (e[0], e[1]) == key] for key in streams}
    for key, (_, label) in streams.items():
        if len(digests[key]) != m:
            raise CheckFailed(f"rank {rank}: {label}有 {len(digests[key])} 个，应该正好 m = {m} 个 ({what})")
        if key[0] == "recv" and None in digests[key]:
            raise CheckFailed(f"rank {rank}: 从 rank {key[1]} 的 irecv 在 train_step 结束时还没完成 (not completed) "
                              f"({what})：irecv 返回的 handle 要 wait()")
    _judge_order(rank, rec["events"], streams, what)
    fwd = {f["mb"]: f for f in rec["forwards"]}
    bwd = {b["mb"]: b for b in rec["backwards"]}
    for k in range(m):
        received = digest(inputs[k]) if rank == 0 else digests["recv", rank - 1][k]
        if fwd[k]["input"] != received:
            source = f"inputs[{k}]" if rank == 0 else f"第 {k} 个{streams['recv', rank - 1][1]}"
            raise CheckFailed(f"rank {rank} 第 {k} 个 forward 的输入 (stage input) 不是 {source} ({what})：stage 要直接用"
                              "收到的张量 (the received tensor) 做 forward")
        if rank < world_size - 1 and digests["send", rank + 1][k] != fwd[k]["output"]:
            raise CheckFailed(f"rank {rank} 第 {k} 个发给 rank {rank + 1} 的不是第 {k} 个 forward 的输出 (stage output) "
                              f"({what})")
        if rank < world_size - 1 and bwd[k]["output_grad"] != digests["recv", rank + 1][k]:
            raise CheckFailed(f"rank {rank} 第 {k} 个 backward 用的输出梯度 (output gradient) 不是第 {k} 个从 rank "
                              f"{rank + 1} 收到的梯度 ({what})")
        if rank > 0 and digests["send", rank - 1][k] != fwd[k]["input_grad"]:
            raise CheckFailed(f"rank {rank} 第 {k} 个发给 rank {rank - 1} 的不是第 {k} 个 micro-batch 输入的梯度 "
                              f"(x.grad) ({what})")
    return digests


def _judge_order(rank: int, events: list, streams: dict, what: str) -> None:
    """Message k of a stream is received before step k (forward or backward) and sent after it."""
    posted = dict.fromkeys(streams, 0)
    done = {"F": 0, "B": 0}
    for e in events:
        if e[0] in done:
            done[e[0]] += 1
            for key, (step, label) in streams.items():
                if key[0] == "recv" and step == e[0] and posted[key] < done[step]:
                    raise CheckFailed(f"rank {rank} 第 {done[step] - 1} 个 {'forward' if step == 'F' else 'backward'} "
                                      f"之前还没有接收 (recv) 对应的{label} ({what})")
        else:
            key = (e[0], e[1])
            posted[key] += 1
            step, label = streams[key]
            if key[0] == "send" and posted[key] > done[step]:
                raise CheckFailed(f"rank {rank} 第 {posted[key] - 1} 个 {'forward' if step == 'F' else 'backward'} "
                                  f"还没做就发出了 (send) {label} ({what})")


def _judge_gradients(rank: int, grads, params: list, m: int, what: str) -> None:
    """The stage's parameter gradients against the single-process reference's."""
    import torch  # noqa: PLC0415

    for k, (got, param) in enumerate(zip(grads, params, strict=True)):
        if got is None:
            raise CheckFailed(f"rank {rank} 的参数 {k} 没有梯度 (grad is None) ({what})：backward 没有做到这个 stage")
        want = param.grad
        tensor = torch.tensor(got[1], dtype=getattr(torch, got[0].removeprefix("torch."), torch.float64))
        scale = want.abs().max().item()
        ratio = tensor.abs().max().item() / scale if scale else None
        hint = ("loss 要除以 m (loss scaling)：整个 batch 的 loss 是各 micro-batch loss 的平均"
                if ratio and abs(ratio - m) < 1e-3 * m else
                "对照单进程的参考梯度：send/recv 的是不是对应的 micro-batch？梯度有没有传回上一个 stage？")
        assert_tensor_close(tensor, want, f"rank {rank} 参数 {k} 的梯度 (gradient) ({what})", hint, atol=1e-9,
                            rtol=1e-7)
