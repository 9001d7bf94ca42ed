# %% [markdown] intro
# ~~ zh 9e444e4e
# # 第 3 章　真跑一遍：在 gloo 进程上执行 1F1B
#
# 前两章的 1F1B 只存在于模拟器里。这一章让它在几个真正的进程上跑起来：每个进程是一个 stage，激活和梯度通过 `torch.distributed`（gloo 后端，CPU 就能跑）点对点传递。我们会先不跑任何进程、只从 plan 推出朴素的阻塞写法会在哪里死锁，再让真的进程验证这个预测，并看哪些写法不会死锁；然后看 loss 为什么要除以 micro-batch 数，micro-batch 长度不同时又该除以什么、什么时候除；怎样证明流水线算出的梯度和单进程完全一致；以及实测的时间线怎样和模拟器对上。最后把同一个模型交给 `torch.distributed.pipelining` 的 `Schedule1F1B`，两边并排比较。术语对照见[术语表](glossary.md)。
#
# **在浏览器里（浏览器版）：** 这一章几乎每一格都要启动真正的 torch.distributed 进程，浏览器做不到：请在桌面版（`make lab`）里打开。浏览器里它会停在第一个需要 torch 的格子。
#
# ## 自测
#
# 1. stage 之间传激活，用阻塞的 `send`/`recv` 一定会死锁吗？什么写法会，什么写法不会？
# 2. 最后一个 stage 为什么要把每个 micro-batch 的 loss 除以 $m$？micro-batch 的有效 token 数不同时呢？整个 batch 的 token 数必须在第一个反向之前就知道吗？
# 3. 怎样证明流水线算出的梯度是对的？为什么比较时的容差可以设得非常小？
# 4. 为什么每条消息都要带一个 tag，标明（类型、stage、micro-batch）？
# 5. 机器的核比进程还少时，实测的时间线怎样才能和模拟器对得上？
#
# <details>
# <summary>参考答案</summary>
#
# 1. 不一定。gloo 的阻塞 `send` 要等对方调用对应的 `recv` 才返回。**朴素的**写法（操作开始时 recv，结束时 send）在 1F1B 的稳定阶段里会死锁：stage $s$ 在把下一个激活发给 $s+1$，而 $s+1$ 正在把一个梯度发回 $s$，两边都停在 send 里，谁也走不到 recv。换个顺序就不会：
#    - 奇偶错序：每次和邻居交换时，偶数 rank 先发后收、奇数 rank 先收后发（Megatron 不用批量通信时就这样做）；
#    - 批量收发：把同一次交换的 send 和 recv 放进一个 `batch_isend_irecv`（torch 的调度类和 NCCL 都这样做）；
#    - 异步发送：`isend` 立刻返回，接收方什么时候来取都行（本课程的 runtime 这样做）。
# 2. 整个 batch 的 loss 是所有有效 token 的 loss 的平均。梯度在各 micro-batch 之间是累加的，所以每个 micro-batch 的 loss 要缩放，加起来才等于整个 batch 平均 loss 的梯度；不缩放，梯度就大了 $m$ 倍。每个 micro-batch 的 token 数相同时，缩放就是乘 $1/m$；不同时（padding、packing），整个 batch 的梯度是各 micro-batch 的 token loss 之和的梯度再除以整个 batch 的 token 数。先取各自的平均再除以 $m$，会让短的 micro-batch 权重过大。不必事先知道 token 数：梯度是线性的，可以先对每个 micro-batch 的 token loss **之和**做反向，flush 之后再把累加的梯度除以 token 数（Megatron-core 的 `calculate_per_token_loss` 就这样做）；事先知道时，也可以每个 micro-batch 直接除。
# 3. 用同一组权重、同一批数据，在单个进程里把整个模型跑一遍，得到参考梯度，逐个参数比较最大绝对误差。两边做的是同样的运算，只是求和顺序不同；用 float64，剩下的只有舍入误差，比容差小好几个数量级，而真正的错误（比如忘了除以 $m$）会让梯度差出一个倍数，一比就露馅。
# 4. 一个 rank 可能同时有好几条来自同一个邻居的消息在路上（激活和梯度、不同的 micro-batch、多个 stage）。带上 tag，接收方就能按自己的执行顺序去取需要的那一条，不必要求发送顺序和接收顺序一一对应，所以同一个执行器能跑各种调度（本章跑了五种）。
# 5. 给每个操作补时（emulated device time）：操作真正算完之后 sleep 到它在代价模型里的时长（每个代价单位对应固定的毫秒数），并且等补时结束才把输出发出去。这样真实计算的快慢、进程对 CPU 的争抢都被盖住，实测的 makespan 就落在模拟值附近。
#
# </details>
# ~~ en 41e7bd00
# # Chapter 3. For real: 1F1B on gloo processes
#
# So far 1F1B has lived only in the simulator. This chapter runs it on real processes: each process is one stage, and activations and gradients travel point to point through `torch.distributed` (the gloo backend, which runs on a CPU). First, without starting a single process, we work out from the plan where the naive blocking version deadlocks; then real processes test that prediction, and we see which orderings do not deadlock. Then: why the loss is divided by the number of micro-batches, what to divide by when micro-batches have different lengths, and when; how to prove that the pipeline's gradients equal a single process's; and how the measured timeline lines up with the simulator. Finally the same model goes through `torch.distributed.pipelining`'s `Schedule1F1B`, side by side with ours. The [glossary](../glossary.md) pairs every term with its Chinese counterpart.
#
# **In the browser (the browser edition):** almost every cell of this chapter starts real torch.distributed processes, which a browser cannot do: open it in the desktop edition (`make lab`). In the browser it stops at the first cell that needs torch.
#
# ## Self-test
#
# 1. Does passing activations between stages with blocking `send`/`recv` always deadlock? Which orderings do, which do not?
# 2. Why does the last stage divide each micro-batch's loss by $m$? What if micro-batches hold different numbers of valid tokens? Must the batch's token count be known before the first backward?
# 3. How do you prove that the pipeline's gradients are right? Why can the tolerance of that comparison be so small?
# 4. Why does every message carry a tag naming (kind, stage, micro-batch)?
# 5. On a machine with fewer cores than processes, how can a measured timeline match the simulator's?
#
# <details>
# <summary>Answers</summary>
#
# 1. Not always. gloo's blocking `send` returns only once the peer has posted the matching `recv`. The **naive** order (receive when an operation starts, send when it ends) deadlocks in 1F1B's steady state: stage $s$ is sending its next activation to $s+1$ while $s+1$ is sending a gradient back to $s$; both wait inside send, and neither reaches its recv. Other orders do not:
#    - parity ordering: in every exchange with a neighbour, even ranks send first and odd ranks receive first (what Megatron does without batched communication);
#    - batched send/recv: the send and the recv of one exchange go into one `batch_isend_irecv` (what torch's schedule classes and NCCL do);
#    - asynchronous sends: `isend` returns at once, and the receiver can collect the message whenever it likes (what this course's runtime does).
# 2. The batch loss is the mean loss over all valid tokens. Gradients add up across micro-batches, so each micro-batch's loss must be scaled for the sum to be the gradient of the batch's mean loss; unscaled, the gradient is $m$ times too large. When every micro-batch has the same number of tokens, the scaling is $1/m$. When they differ (padding, packing), the batch gradient is the gradient of the micro-batches' summed token losses divided by the batch's token count; taking each micro-batch's own mean and dividing by $m$ gives short micro-batches too much weight. The count need not be known in advance: gradients are linear, so one can backpropagate each micro-batch's token-loss **sum** and divide the accumulated gradients by the count after the flush (what Megatron-core's `calculate_per_token_loss` does); when the count is known up front, each micro-batch can divide right away instead.
# 3. Run the whole model in one process with the same weights and the same data to get reference gradients, and compare every parameter's maximum absolute error. Both sides do the same arithmetic in a different order of summation; in float64 what remains is rounding error, orders of magnitude below the tolerance, while a real mistake (forgetting to divide by $m$, say) is off by a whole factor and shows at once.
# 4. A rank may have several messages from the same neighbour in flight at once (activations and gradients, different micro-batches, several stages). With a tag the receiver takes the one it needs in its own order of execution, so the order of sends need not match the order of receives, and one executor runs schedules of every kind (this chapter runs five).
# 5. Pad every operation to its modelled duration (emulated device time): after the real computation, sleep until the operation has taken as long as the cost model says (a fixed number of milliseconds per cost unit), and send its output only then. That hides how fast the real computation is and how the processes compete for the CPU, and the measured makespan lands near the simulated one.
#
# </details>

# %%
import inspect
import os
import random
import re
import textwrap
import time

from course import figure, minipipe, plots
from course.chapter import md, open_chapter
from course.claims import claim, reveal, sweep
from course.costs import Costs
from course.live import DeadlockDetected, WorkerError, launch, run_plan, stray_workers
from course.live.demos import fail_on, hello
from course.live.model import Chunk, ModelConfig, loss_fn, make_batch
from course.lower import ORDERS, SEND, blocking_deadlock, exchanges, lower
from course.schedules import build
from course.widgets import explore

text = open_chapter("03_live_1f1b")
P, M = 4, 8

# %% [markdown] launch
# ~~ zh c34e736e
# ## 1. 启动几个进程
#
# `course.live.launch(target, world_size)` 启动 `world_size` 个 worker 进程，在每个进程里建好 gloo 进程组（127.0.0.1、由操作系统挑一个空闲端口），然后调用 `target(rank, world_size)`，把每个 rank 的返回值收回来。几个要点：
#
# - worker 是新进程，它按名字 import `target`，所以 `target` 必须写在 `.py` 模块里，不能写在 notebook 的单元格里；
# - 启动器在后台留着一个已经 import 好 torch 的"孵化"进程（zygote），每次从它 fork 出 worker，所以只有第一次启动要等 import；
# - 某个 rank 抛了异常，异常连同它的 rank 和 traceback 一起传回来；出错、超时或死锁时，整个作业的进程组被一起杀掉，不留孤儿进程。
# ~~ en 98e84398
# ## 1. Starting a few processes
#
# `course.live.launch(target, world_size)` starts `world_size` worker processes, sets up a gloo process group in each (on 127.0.0.1, on a free port the operating system picks), calls `target(rank, world_size)` and collects every rank's return value. A few points:
#
# - a worker is a new process that imports `target` by name, so `target` must live in a `.py` module, not in a notebook cell;
# - the launcher keeps a background process that has already imported torch (the zygote) and forks every worker from it, so only the first start waits for the import;
# - when a rank raises, the exception comes back with its rank and traceback; on an error, a timeout or a deadlock the job's whole process group is killed, and no orphan is left behind.

# %%
t0 = time.perf_counter()
hello_rows = launch(hello, P, echo=False)
first_s = time.perf_counter() - t0
t0 = time.perf_counter()
launch(hello, P, echo=False)
again_s = time.perf_counter() - t0

# %% [text] hello
# ~~ zh 24b7e3c9
# {p} 个进程各自把自己的 rank 加进 `all_reduce`，每个人都得到 {total}。
# ~~ en d4ccb5bb
# Each of the {p} processes adds its rank into an `all_reduce`, and every one of them gets {total}.

# %% [text] hello-again
# ~~ zh 1fa0a3eb
# 第一次启动用了 {first:.1f} 秒，再启动一次只用了 {again:.2f} 秒：孵化进程只在第一次启动时 import torch。
# ~~ en 5b07af34
# The first start took {first:.1f} s and the second only {again:.2f} s: the zygote imports torch on the first start only.

# %% [text] hello-busy
# ~~ zh be781925
# 第一次启动用了 {first:.1f} 秒，第二次 {again:.2f} 秒。孵化进程这次已经在后台等着了，第二次却没有更快，说明这台机器此刻很忙。
# ~~ en 2fac7eee
# The first start took {first:.1f} s and the second {again:.2f} s. The zygote was already waiting this time, yet the second start was no faster: this machine is busy right now.

# %%
for row in hello_rows:
    print(row)
md(text("hello", p=P, total=sum(range(P))) + " "
   + claim(again_s < first_s, text("hello-again", first=first_s, again=again_s),
           otherwise=text("hello-busy", first=first_s, again=again_s)))

# %% [markdown] worker-error
# ~~ zh a663ae40
# 一个 rank 出错时，其他 rank 还停在 barrier 里等它。启动器发现出错的进程，结束整个作业，报告是哪个 rank、什么异常：
# ~~ en d7a11c9d
# When one rank fails, the others are still waiting for it in a barrier. The launcher notices the failed process, ends the whole job and reports which rank raised what:

# %%
try:
    launch(fail_on, P, args=(2,), timeout=30)
except WorkerError as err:
    print(f"rank {err.rank}: {err.exc_type}: {err.message}")
    print(err.traceback.strip().splitlines()[-1])

# %% [markdown] run-plan
# ~~ zh 1e8a9245
# ## 2. 在多个进程上跑 1F1B
#
# `run_plan(plan)` 把第 2 章的 plan 原样交给每个进程执行。模型是一串 `Linear + Tanh` 块（宽度、每个 stage 的块数、随机种子见 `ModelConfig`），float64；每个进程只建自己那一段。执行器对每个操作做这些事：
#
# - **F**：第一个 stage 取自己的那份输入，其他 stage 取上一个 stage 发来的激活（`requires_grad_()`，反向时才能对它求梯度），算完用 `isend` 发给下一个 stage；最后一个 stage 算 loss 并乘以 $1/m$；
# - **B**：最后一个 stage 直接对缩放后的 loss 求导；其他 stage 取下一个 stage 发回的梯度，用 `torch.autograd.grad` 同时得到参数梯度和输入梯度，输入梯度发回上一个 stage；
# - 每条消息的 tag 由（类型、micro-batch、接收它的 stage）算出；所有要收的消息在开跑前就用 `irecv` 挂好，到了某个操作，只等它自己那一条。
# ~~ en e4c29c77
# ## 2. 1F1B on several processes
#
# `run_plan(plan)` hands chapter 2's plan, unchanged, to every process. The model is a chain of `Linear + Tanh` blocks (width, blocks per stage and random seed are in `ModelConfig`) in float64; each process builds only its own part. For each operation the executor does this:
#
# - **F**: the first stage takes its own share of the input, every other stage the activation the previous stage sent (with `requires_grad_()`, so that the backward can take its gradient); the output goes to the next stage with `isend`; the last stage computes the loss and multiplies it by $1/m$;
# - **B**: the last stage differentiates its scaled loss; every other stage takes the gradient sent back by the next stage and gets the parameter gradients and the input gradient in one `torch.autograd.grad`, and sends the input gradient back to the previous stage;
# - each message's tag is computed from (kind, micro-batch, receiving stage); every message a rank will receive is posted with `irecv` before the run starts, and each operation waits only for its own.

# %%
plan = build("1f1b", P, M)
live_cfg = ModelConfig()            # what run_plan uses by default
live = run_plan(plan)

# %% [text] run-plan-ok
# ~~ zh 247b8dd6
# 模型：宽度 {width}，每个 stage {blocks} 块，每个 micro-batch {rows} 个样本，{dtype}。每个 rank 实际执行的顺序与 plan 完全一致；所有参数梯度与单进程参考的最大绝对误差是 {err:.1e}（容差 {tol:g}），检查通过。
# ~~ en 67b654b2
# The model: width {width}, {blocks} blocks per stage, {rows} samples per micro-batch, {dtype}. Every rank executed exactly the plan's order, and the largest absolute error of any parameter gradient against the single-process reference is {err:.1e} (tolerance {tol:g}): the check passes.

# %%
print(live)
for r in range(P):
    print(f"rank {r}: {' '.join(live.timeline.ops(r))}")
same_order = all(live.timeline.ops(r) == [str(s) for s in plan.ranks[r]] for r in range(P))
md(claim(same_order and live.grad_ok,
         text("run-plan-ok", width=live_cfg.width, blocks=live_cfg.blocks_per_stage, rows=live_cfg.microbatch_size,
              dtype=live_cfg.dtype, err=live.max_abs_err, tol=live.tolerance),
         same_order=same_order, max_abs_err=live.max_abs_err))

# %% [markdown] blocking
# ~~ zh 23290c54
# ## 3. 阻塞发送：朴素的写法会死锁，换个顺序就不会
#
# 把 `isend`/预先挂好的 `irecv` 换成"在操作里阻塞地 `send`、用到时才 `recv`"（朴素的阻塞写法），会发生什么？gloo 的阻塞 `send` 要等对方挂上对应的 `recv` 才返回。本课程的 runtime 里 `blocking_send=True` 就是这个教学模式；`course.minipipe.worker` 是另一份更短的实现：每个 rank 一个 stage（Linear + Tanh），Megatron 的不交错 1F1B，通信全用阻塞的 `send`/`recv`。它和邻居的每次交换是 `exchange(send, to, frm)`：发一个张量、收一个张量，`comm` 决定两个调用的先后：
#
# - `naive`：先 send 后 recv，就是朴素的写法；
# - `parity`：偶数 rank 先 send 后 recv，奇数 rank 先 recv 后 send；
# - `batched`：send 和 recv 放进同一个 `batch_isend_irecv`，一起等它们完成。
# ~~ en 35de4c21
# ## 3. Blocking sends: the naive order deadlocks, another order does not
#
# What happens if `isend` and the receives posted up front give way to "a blocking `send` inside the operation, a `recv` when the data is needed" (the naive blocking version)? gloo's blocking `send` returns only once the peer has posted the matching `recv`. In this course's runtime, `blocking_send=True` is that teaching mode; `course.minipipe.worker` is a second, much shorter implementation: one stage per rank (Linear + Tanh), Megatron's non-interleaved 1F1B, and nothing but blocking `send`/`recv`. Each exchange with a neighbour is `exchange(send, to, frm)`: send one tensor, receive one tensor, with `comm` deciding the order of the two calls:
#
# - `naive`: send, then recv: the naive order;
# - `parity`: even ranks send then receive, odd ranks receive then send;
# - `batched`: the send and the recv go into one `batch_isend_irecv` and are waited for together.

# %%
worker_source = inspect.getsource(minipipe.worker)
print(textwrap.dedent(worker_source[worker_source.index("    def exchange("):worker_source.index("    def send(")]))

# %% [markdown] predict-stuck
# ~~ zh 3d91b1a5
# **预测：** 4 个 rank、8 个 micro-batch，朴素的阻塞写法。作业停住时，每个 rank 停在发给哪个 rank 的 send 里？写成 `{rank: 它正在发给的 rank}`，例如 `{0: 1, 1: 0}`。
# ~~ en 70169e39
# **Predict:** 4 ranks, 8 micro-batches, the naive blocking order. When the job stops, which rank is each rank stuck sending to? Write it as `{rank: the rank it is sending to}`, for example `{0: 1, 1: 0}`.

# %%
guess_stuck = None   # {rank: the rank it is stuck sending to}

# %% [markdown] predict-parity
# ~~ zh abf6ba2e
# **预测：** 同样 4 个 rank、8 个 micro-batch，用 `comm="parity"`（仍然全是阻塞的 send/recv），会死锁吗？写 `True`（会）或 `False`（不会）。
# ~~ en c60a684c
# **Predict:** the same 4 ranks and 8 micro-batches with `comm="parity"` (still nothing but blocking send/recv): does it deadlock? Write `True` (it does) or `False` (it does not).

# %%
guess_parity_deadlocks = None   # True or False

# %% [markdown] lowering
# ~~ zh 3afa7dcf
# 这两个问题不用跑进程就能回答。`course.lower` 把 plan 降级（lowering）成每个 rank 的动作序列：计算一个操作（COMPUTE）、发一个张量（SEND，紧跟在产生它的操作之后）、收一个张量（RECV，在用到它的操作之前）。`exchanges(lowered, order)` 把同一个 rank 两次计算之间、和同一个邻居的 send 与 recv 归成一次交换，像 `minipipe` 那样按 `naive`、`parity` 或 `batched` 排好调用；`blocking_deadlock` 把这些调用当成阻塞调用走一遍：send 要等对方挂上 recv 才返回，recv 要等对方的 send。走不下去时，它报告每个 rank 停在哪个动作上。下面是降级后 rank 2 和 rank 3 的前几个动作，以及三种顺序的预测：
# ~~ en 268711fd
# Both questions can be answered without starting a process. `course.lower` lowers a plan into each rank's sequence of actions: compute one operation (COMPUTE), send a tensor (SEND, right after the operation that produced it), receive a tensor (RECV, before the operation that uses it). `exchanges(lowered, order)` groups the sends and receives a rank has with one neighbour between two computations into one exchange and orders the calls as `minipipe` does for `naive`, `parity` or `batched`; `blocking_deadlock` then plays the calls as blocking calls: a send returns only once the peer has posted the receive, a receive only once the peer has sent. When nothing can move, it reports the action each rank is stuck in. Here are the first lowered actions of ranks 2 and 3, and the prediction for each of the three orders:

# %%
lowered = lower(plan)
predicted = {order: blocking_deadlock(exchanges(lowered, order)) for order in ORDERS}
predicted_gpipe = blocking_deadlock(lower(build("gpipe", P, 4)))


def where(line: str) -> tuple[str, int] | None:
    """(send or recv, peer rank) of a line that says where a rank is blocked: the watchdog's or the lowering's."""
    hit = re.search(r"blocked in (send|recv)\b.*? (?:to|from) rank (\d+)", line)
    return (hit.group(1), int(hit.group(2))) if hit else None


predicted_at = {r: where(a.describe()) for r, a in (predicted["naive"] or {}).items()}
for r in (P - 2, P - 1):
    print(f"rank {r}: " + " ".join(a.token() for a in lowered[r][:12]) + " ...")
print()
for r, action in (predicted["naive"] or {}).items():
    print(f"naive, rank {r}: {action.describe()}")

# %% [text] predicted
# ~~ zh 3229f40e
# 降级的预测：`naive` 死锁，{ranks} 都停在 send 里，rank {a} 和 rank {b} 互相发送，谁也走不到自己的 recv；`parity` 和 `batched` 都能走完；同样朴素的写法，GPipe（$m=4$）也能走完。
# ~~ en ce84fe02
# The lowering predicts: `naive` deadlocks with {ranks} all stuck in a send, ranks {a} and {b} each sending to the other so that neither reaches its recv; `parity` and `batched` run to the end; and GPipe ($m=4$) runs to the end with the same naive order.

# %%
stuck_sends = {r: a.peer for r, a in (predicted["naive"] or {}).items() if a.kind == SEND}
cycle = sorted({tuple(sorted((a, b))) for a, b in stuck_sends.items() if stuck_sends.get(b) == a})
md(reveal(guess_stuck, stuck_sends, claim(
    len(stuck_sends) == P and len(cycle) == 1 and predicted["parity"] is None and predicted["batched"] is None
    and predicted_gpipe is None,
    text("predicted", ranks=", ".join(f"rank {r} → rank {q}" for r, q in stuck_sends.items()),
         a=cycle[0][0] if cycle else -1, b=cycle[0][1] if cycle else -1),
    stuck=stuck_sends, parity=predicted["parity"], batched=predicted["batched"], gpipe=predicted_gpipe)))

# %% [markdown] blocking-live
# ~~ zh d4013613
# 现在让真的进程来验证。`blocking_send=True` 让 runtime 在操作里阻塞地 send、用到时才 recv。启动器里有一个看门狗：所有没做完的 rank 都停在通信里、几秒钟没有任何进展（状态没变，也没用 CPU），就判为死锁，杀掉整个作业，并报告每个 rank 停在哪个操作的哪次 send/recv 上。
# ~~ en ed0411a2
# Now real processes test the prediction. `blocking_send=True` makes the runtime send with a blocking call inside the operation and receive when the data is needed. The launcher has a watchdog: when every unfinished rank has been waiting in communication for a few seconds without any progress (no change of state, no CPU used), it declares a deadlock, kills the whole job and reports which send or recv of which operation each rank is stuck in.

# %%
t0 = time.perf_counter()
try:
    run_plan(plan, blocking_send=True)
    deadlock = None
except DeadlockDetected as err:
    deadlock = err
detect_s = time.perf_counter() - t0

# %% [text] blocking-confirmed
# ~~ zh cdd74a43
# 看门狗在 {s:.1f} 秒内报告了死锁，作业结束后没有残留的 worker 进程。报告里每个 rank 停的位置与降级的预测一字不差：同一个操作、同一个方向、同一个对方 rank、同一个 tag。
# ~~ en bdf27bd4
# The watchdog reported the deadlock within {s:.1f} s, and no worker process was left behind. For every rank the report names exactly the place the lowering predicted: the same operation, the same direction, the same peer rank, the same tag.

# %%
print(deadlock)
reported = {r: line.split(" [")[0] for r, line in deadlock.states.items()} if deadlock else {}
as_predicted = {r: a.describe() for r, a in (predicted["naive"] or {}).items()}
md(claim(deadlock is not None and reported == as_predicted and not stray_workers(),
         text("blocking-confirmed", s=detect_s), reported=reported, predicted=as_predicted))

# %% [markdown] gpipe-blocking
# ~~ zh 88b2576c
# 异步发送打破了这个环：`isend` 立刻返回，倒数第二个 rank 接着做下一个操作，去收最后一个 rank 发回的梯度。同样的阻塞写法，GPipe 不会停住（相邻 stage 不会同时互相发送），所以"在 GPipe 上能跑"证明不了阻塞写法是对的：
# ~~ en 2a3da5f8
# Asynchronous sends break the cycle: `isend` returns at once, so the second-to-last rank goes on to its next operation and receives the gradient the last rank sent back. With the same blocking version GPipe does not stop (neighbouring stages never send to each other at the same time), so "it runs on GPipe" proves nothing about a blocking version:

# %%
gpipe_blocking = run_plan(build("gpipe", P, 4), blocking_send=True)

# %% [text] gpipe-runs
# ~~ zh 987b21cc
# GPipe 用阻塞 send 跑完了，梯度误差 {err:.1e}，正如降级预测的那样。
# ~~ en 9d4d7f55
# GPipe with blocking sends ran to the end, with a gradient error of {err:.1e}, as the lowering predicted.

# %%
print(gpipe_blocking)
md(claim(gpipe_blocking.grad_ok and predicted_gpipe is None, text("gpipe-runs", err=gpipe_blocking.max_abs_err),
         err=gpipe_blocking.max_abs_err))

# %% [markdown] orderings
# ~~ zh d3da89b4
# 再用 `minipipe` 把三种顺序都跑一遍（8 个 micro-batch 一样长，缩放就是 $1/m$），每种的梯度都与单进程参考比较：
# ~~ en e435072d
# Next `minipipe` runs all three orders (8 micro-batches of equal length, so the scaling is $1/m$), and each one's gradients are compared with the single-process reference:

# %%
LENGTHS = [minipipe.ROWS] * M      # every micro-batch full: the plain 1/m case
want = minipipe.reference(P, M, LENGTHS)
outcome = {}
for comm in minipipe.COMMS:
    try:
        outcome[comm] = minipipe.max_error(minipipe.run(P, M, comm, LENGTHS), want)
    except DeadlockDetected as err:
        outcome[comm] = err.states

# %% [text] orderings-result
# ~~ zh b2b83ab3
# `naive` 死锁，每个 rank 停在的 send（{peers}）与降级的预测相同；`parity` 和 `batched` 都跑完了，梯度与单进程参考的最大误差分别是 {parity:.1e} 和 {batched:.1e}。奇偶错序里，每对相邻的 rank 一个是偶数一个是奇数，总有一边先在 recv，环就断了。所以死锁的不是"阻塞"本身，而是朴素的调用顺序。NCCL 上同样的问题更常见，所以 torch 的调度类一律用 `batch_isend_irecv`。
# ~~ en e6a8005a
# `naive` deadlocks with each rank stuck in a send ({peers}), exactly where the lowering predicted; `parity` and `batched` both finish, with largest gradient errors of {parity:.1e} and {batched:.1e} against the single-process reference. In the parity ordering each pair of neighbours has one even and one odd rank, so one side is always receiving first and the cycle is broken. What deadlocks is not blocking as such but the naive order of the calls. The same problem is more common on NCCL, which is why torch's schedule classes always use `batch_isend_irecv`.

# %%
deadlocked = {c: o for c, o in outcome.items() if isinstance(o, dict)}
errors = {c: o for c, o in outcome.items() if not isinstance(o, dict)}
live_at = {r: where(line) for r, line in deadlocked.get("naive", {}).items()}
md(reveal(guess_parity_deadlocks, "parity" in deadlocked, claim(
    set(deadlocked) == {"naive"} and live_at == predicted_at and max(errors.values()) < 1e-12,
    text("orderings-result", peers=", ".join(f"rank {r} → rank {q}" for r, (_, q) in sorted(live_at.items())),
         parity=errors.get("parity", float("nan")), batched=errors.get("batched", float("nan"))),
    outcome=outcome, predicted=predicted_at)))

# %% [markdown] deadlock-rules
# ~~ zh 08ab34d7
# 4 个 rank、8 个 micro-batch 只是一个点。降级的规则能在很多点上检查，一个点只要几毫秒。下一格在 $p$ 从 2 到 8、$m$ 从 1 到 32 的随机点上检查四条规则：朴素写法的 1F1B 恰好在 $m \ge 2$ 时死锁（$m=1$ 时 1F1B 没有稳定阶段）；`batched` 从不死锁；朴素写法的 GPipe 从不死锁；`parity` 在 $m \ge p$ 时从不死锁。最后一条只在 $m \ge p$ 上检查：$m < p$ 时，有的 rank 做完预热就直接进入收尾、没有稳定阶段，`exchanges` 会把它最后一个预热前向的 send 和第一个梯度的 recv 归成一次交换，而 `minipipe` 和 Megatron 的循环把这两个调用分开做，模型和 worker 在这里不是同一种写法。
# ~~ en cb4c3c67
# Four ranks and eight micro-batches are a single point. The lowering checks a rule at many points, a few milliseconds each. The next cell checks four rules at random points with $p$ from 2 to 8 and $m$ from 1 to 32: naive 1F1B deadlocks exactly when $m \ge 2$ (at $m=1$ 1F1B has no steady state); `batched` never deadlocks; naive GPipe never deadlocks; `parity` never deadlocks when $m \ge p$. The last rule is checked for $m \ge p$ only: when $m < p$ some ranks go straight from their warm-up to the cool-down without a steady state, and `exchanges` groups such a rank's send of its last warm-up forward with its receive of the first gradient into one exchange, whereas `minipipe` and Megatron's loop make the two calls separately; there the model and the worker are not the same program.

# %%
def deadlock_rules(p: int, m: int) -> bool:
    """The four rules of the cell above at one (p, m), in the lowering's model."""
    plain = lower(build("1f1b", p, m))
    stuck = {order: blocking_deadlock(exchanges(plain, order)) for order in ORDERS}
    return ((stuck["naive"] is not None) == (m >= 2) and stuck["batched"] is None
            and blocking_deadlock(lower(build("gpipe", p, m))) is None and (m < p or stuck["parity"] is None))


t0 = time.perf_counter()
deadlock_sweep = sweep(deadlock_rules, {"p": (2, 8), "m": (1, 32)}, n=40, seed=3)
deadlock_sweep_s = time.perf_counter() - t0

# %% [text] deadlock-rules-hold
# ~~ zh e43be4fc
# 四条规则在 {checked} 个点上都成立（$p$ 取 2..8、$m$ 取 1..32，含四个角，用时 {s:.1f} 秒）。这是降级模型上的检查：它证明的是"阻塞 send 等到对方 recv 才返回"这一读法下的结论，真的进程上我们只验证了上面那几个点。
# ~~ en 9cbc0c48
# All four rules hold at the {checked} points checked ($p$ in 2..8, $m$ in 1..32, the four corners included; {s:.1f} s). This is a check in the lowering's model: it proves the rules under the reading "a blocking send returns once the peer has posted its receive"; on real processes we have checked only the points above.

# %%
md(claim(deadlock_sweep.holds, text("deadlock-rules-hold", checked=deadlock_sweep.checked, s=deadlock_sweep_s),
         **deadlock_sweep.figures()))

# %% [markdown] exercise-live
# ~~ zh 5dc539e4
# **轮到你了。** 练习 `live-1f1b` 让你在 4 个 gloo 进程上写出一个 rank 的 1F1B 训练步：先用最直接的阻塞 send/recv 写，读看门狗的报告，对照上面的预测，再改到通过。`exchange` 只是其中一小块，预热、稳定阶段、收尾、loss 缩放和 $m < p$ 都要你自己安排。做完之后再去读 `course/minipipe.py` 里完整的 `worker`，和你的写法比一比。
#
# ```bash
# python practice/judge.py start live-1f1b
# ```
# ~~ en 61bb3aa6
# **Your turn.** The exercise `live-1f1b` has you write one rank's 1F1B training step on 4 gloo processes: write it first with the plainest blocking send/recv, read the watchdog's report against the prediction above, then change it until it passes. `exchange` is only a small piece of it; the warm-up, the steady state, the cool-down, the loss scaling and $m < p$ are yours to arrange. Once you have passed, read the whole `worker` in `course/minipipe.py` and compare it with yours.
#
# ```bash
# python practice/judge.py start live-1f1b
# ```

# %% [markdown] loss-scaling
# ~~ zh 7e271097
# ## 4. loss 缩放：为什么除以 $m$
#
# 整个 batch 的 loss 是各 micro-batch loss 的平均。在单个进程里直接验证。
# ~~ en 69615d35
# ## 4. Loss scaling: why divide by $m$
#
# The batch loss is the mean of the micro-batches' losses. Check it directly in one process.

# %% [markdown] predict-unscaled
# ~~ zh 35aa38e0
# **预测：** 每个 micro-batch 的 loss 不缩放、直接反向累加，得到的梯度是正确值的几倍？
# ~~ en 549fc17c
# **Predict:** if each micro-batch's loss is backpropagated unscaled and the gradients accumulate, how many times the correct gradient do you get?

# %%
guess_unscaled = None   # your prediction

# %% [text] unscaled
# ~~ zh a210fd8e
# 每个 micro-batch 的 loss 除以 $m={m}$ 再累加：与整个 batch 的梯度相差 {err:.1e}。不除：梯度是正确值的 {ratio:.3f} 倍，正好是 $m$。流水线最后一个 stage 报告的平均 loss 是 {pipe:.6f}，单进程整个 batch 的 loss 是 {whole:.6f}。
# ~~ en 9b12edf8
# Each micro-batch's loss divided by $m={m}$ before accumulating: {err:.1e} away from the whole batch's gradient. Undivided: {ratio:.3f} times the correct gradient, exactly $m$. The pipeline's last stage reports a mean loss of {pipe:.6f}; one process on the whole batch gets {whole:.6f}.

# %%
cfg = ModelConfig()
chunks = [Chunk(k, cfg) for k in range(P)]
params = [q for c in chunks for q in c.parameters()]
x, y = make_batch(cfg, M)


def run_model(inp):
    for c in chunks:
        inp = c(inp)
    return inp


def grads_of(loss_of_batch):
    for q in params:
        q.grad = None
    loss_of_batch()
    return [q.grad.clone() for q in params]


full = grads_of(lambda: loss_fn(run_model(x), y).backward())
scaled = grads_of(lambda: [(loss_fn(run_model(xi), yi) / M).backward() for xi, yi in zip(x.chunk(M), y.chunk(M))])
unscaled = grads_of(lambda: [loss_fn(run_model(xi), yi).backward() for xi, yi in zip(x.chunk(M), y.chunk(M))])
err_scaled = max((a - b).abs().max().item() for a, b in zip(scaled, full))
ratio = (unscaled[0] / full[0]).mean().item()
batch_loss = loss_fn(run_model(x), y).item()
md(reveal(guess_unscaled, ratio, claim(err_scaled < 1e-12 and abs(ratio - M) < 1e-9,
          text("unscaled", m=M, err=err_scaled, ratio=ratio, pipe=sum(live.losses) / len(live.losses),
               whole=batch_loss),
          err_scaled=err_scaled, ratio=ratio)))

# %% [markdown] tokens
# ~~ zh 63ac6246
# ### micro-batch 长度不同：按 token 数归一化
#
# 除以 $m$ 只在每个 micro-batch 贡献同样多个 token 时才对。语言模型的 micro-batch 常常带 padding 或者是拼接（packing）出来的，有效 token 数各不相同。整个 batch 的 loss 是**所有有效 token** 的平均，所以它的梯度是各 micro-batch 的 token loss 之和的梯度除以**整个 batch** 的 token 数；先取各自的平均、再除以 $m$，短的 micro-batch 就被放大了。这是一个真实、常见的 bug（2024 年 Hugging Face Transformers 的梯度累积就因此修过一次）。
#
# `minipipe` 的最后一个 stage 把每个 micro-batch 的 token loss 之和除以整个 batch 的 token 数（`token_loss`）。下面给 8 个 micro-batch 不同的有效 token 数，在单个进程里比较几种缩放：每一种都是一个 micro-batch 一次反向，梯度累加，和流水线里一样。
# ~~ en fa0d89ca
# ### Micro-batches of different lengths: normalising by tokens
#
# Dividing by $m$ is right only when every micro-batch contributes the same number of tokens. A language model's micro-batches often carry padding or are packed, and hold different numbers of valid tokens. The batch loss is the mean over **all valid tokens**, so its gradient is the gradient of the micro-batches' summed token losses divided by the token count of the **whole batch**; taking each micro-batch's own mean and dividing by $m$ inflates the short micro-batches. This is a real and common bug (Hugging Face Transformers fixed its gradient accumulation for it in 2024).
#
# `minipipe`'s last stage divides each micro-batch's summed token loss by the whole batch's token count (`token_loss`). Below, the 8 micro-batches get different numbers of valid tokens, and one process compares several scalings; each does one backward per micro-batch and accumulates the gradients, as a pipeline does.

# %% [markdown] predict-mean-of-means
# ~~ zh 4c91ac96
# **预测：** 有效 token 数不同时，"每个 micro-batch 取自己的平均 loss、再除以 $m$"得到的梯度，和整个 batch 按 token 平均的梯度一样吗？写 `True` 或 `False`。
# ~~ en 6994dce7
# **Predict:** when the numbers of valid tokens differ, is the gradient of "each micro-batch's own mean loss, divided by $m$" the same as that of the whole batch's token mean? Write `True` or `False`.

# %%
guess_mean_of_means_ok = None   # True or False

# %%
UNEVEN = [4, 1, 3, 2, 4, 4, 2, 3][:M] + [minipipe.ROWS] * max(0, M - 8)
stages = [minipipe.stage(s) for s in range(P)]
stage_params = [q for s in stages for q in s.parameters()]


def accumulated(lengths: list[int], scaling: str) -> list:
    """Every parameter gradient of the P-stage model after one backward per micro-batch, scaled by ``scaling``:
    "mean/m" (each micro-batch's own token mean, divided by m), "before" (each micro-batch's token-loss sum
    divided by the batch's token count, known before the first backward), "after" (the token-loss sums; the
    accumulated gradients divided by the count after the flush)."""
    xs, ys, mask = minipipe.batch(len(lengths), lengths)
    total = mask.sum()
    for q in stage_params:
        q.grad = None
    for i in range(len(lengths)):
        out = xs[i]
        for s in stages:
            out = s(out)
        divisor = {"mean/m": mask[i].sum() * len(lengths), "before": total, "after": 1.0}[scaling]
        minipipe.token_loss(out, ys[i], mask[i], divisor).backward()
    return [q.grad / (total if scaling == "after" else 1.0) for q in stage_params]


def gap(a: list, b: list) -> float:
    return max((u - v).abs().max().item() for u, v in zip(a, b))


def token_mean(lengths: list[int]) -> list:
    """The whole batch's token-mean gradient from one backward over every micro-batch at once."""
    return [g for per_stage in minipipe.reference(P, len(lengths), lengths) for g in per_stage]


token_gap = gap(accumulated(UNEVEN, "mean/m"), token_mean(UNEVEN))
before_err = gap(accumulated(UNEVEN, "before"), token_mean(UNEVEN))
pipeline_err = minipipe.max_error(minipipe.run(P, M, "parity", UNEVEN), minipipe.reference(P, M, UNEVEN))

# %% [text] mean-of-means
# ~~ zh 7685ff1e
# 有效 token 数 {lengths}：平均的平均与按 token 平均的梯度差了 {gap:.2e}，不一样；每个 micro-batch 的 token loss 之和除以整个 batch 的 {tokens} 个 token，与它只差 {before:.1e}。{p} 个进程上的 `minipipe`（同样的缩放）与单进程在整个 batch 上按 token 平均的梯度相差 {pipe:.1e}：只剩舍入误差。
# ~~ en 2deef49a
# Valid tokens {lengths}: the mean of means is {gap:.2e} away from the token-mean gradient, so they differ; each micro-batch's token-loss sum divided by the batch's {tokens} tokens is only {before:.1e} away from it. `minipipe` on {p} processes (the same scaling) is {pipe:.1e} away from one process's token mean over the whole batch: rounding error only.

# %%
md(reveal(guess_mean_of_means_ok, token_gap < 1e-12, claim(
    token_gap > 1e-6 and before_err < 1e-12 and pipeline_err < 1e-12,
    text("mean-of-means", lengths=UNEVEN, gap=token_gap, tokens=sum(UNEVEN), before=before_err, p=P,
         pipe=pipeline_err),
    gap=token_gap, before=before_err, pipeline_err=pipeline_err)))

# %% [markdown] predict-count-first
# ~~ zh 7989d772
# **预测：** "每个 micro-batch 除以整个 batch 的 token 数"要求最后一个 stage 在第一个反向之前就知道这个数：数据加载时算好，跨数据并行时还要先做一次 all-reduce。这是必须的吗？写 `True`（必须事先知道）或 `False`（不必）。
# ~~ en f80b2d9e
# **Predict:** "divide each micro-batch by the batch's token count" needs the last stage to know that count before its first backward: counted when the data is loaded, and all-reduced first across data-parallel replicas. Is that necessary? Write `True` (it must be known in advance) or `False` (it need not).

# %%
guess_count_first = None   # True or False

# %% [markdown] after-flush
# ~~ zh 46905b3f
# 梯度对 loss 是线性的：$\nabla \frac{1}{N}\sum_i L_i = \frac{1}{N}\sum_i \nabla L_i$，其中 $L_i$ 是第 $i$ 个 micro-batch 的 token loss 之和，$N$ 是整个 batch 的 token 数。所以可以先对每个 $L_i$ 本身做反向（不除任何数），等 flush（最后一个反向做完）之后再把累加好的梯度除以 $N$。$N$ 这时才需要，而且只需要这个和：最后一个 stage 边算 loss 边把各 micro-batch 的 token 数加起来。下一格把两种做法放在一起比较：
# ~~ en 6bb42538
# The gradient is linear in the loss: $\nabla \frac{1}{N}\sum_i L_i = \frac{1}{N}\sum_i \nabla L_i$, where $L_i$ is micro-batch $i$'s summed token loss and $N$ the batch's token count. So one can backpropagate each $L_i$ as it is (divided by nothing) and divide the accumulated gradients by $N$ after the flush (once the last backward is done). $N$ is needed only then, and only as a sum: the last stage adds up the micro-batches' token counts as it computes their losses. The next cell compares the two ways:

# %%
after_flush = accumulated(UNEVEN, "after")
after_err = gap(after_flush, token_mean(UNEVEN))
before_vs_after = gap(after_flush, accumulated(UNEVEN, "before"))

# %% [text] after-flush-result
# ~~ zh e941e804
# 先对 token loss 之和做反向、flush 之后再除以 {tokens}：与整个 batch 按 token 平均的梯度相差 {after:.1e}，与事先除的做法相差 {both:.1e}，只剩舍入误差。所以不必事先知道 token 数，事先知道只是一种选择。
# ~~ en 7b3caac0
# Backpropagating the token-loss sums and dividing by {tokens} after the flush: {after:.1e} away from the whole batch's token-mean gradient and {both:.1e} away from dividing up front, rounding error only. So the count need not be known in advance; knowing it up front is one option among two.

# %%
md(reveal(guess_count_first, not (after_err < 1e-12), claim(
    after_err < 1e-12 and before_vs_after < 1e-12,
    text("after-flush-result", tokens=sum(UNEVEN), after=after_err, both=before_vs_after),
    after=after_err, both=before_vs_after)))

# %% [markdown] megatron-tokens
# ~~ zh e8dbadda
# Megatron-core 正是这样做的。打开 `calculate_per_token_loss` 之后，loss 函数返回 token loss 之和和 token 数，调度在最后一个 stage 上把 token 数加起来，flush 之后交给 `finalize_model_grads(model, num_tokens)`：它先把 token 数从最后一个 stage 广播（broadcast）给流水线里的其他 stage（只有最后一个 stage 有标签，也只有它知道这个数），再在数据并行的副本之间 all-reduce，最后把每个梯度乘以 $1/N$（`megatron/core/distributed/finalize_model_grads.py`）。两种做法各有代价：事先除，要在第一个反向之前拿到 $N$；事后除，梯度在 flush 之前都没有缩放，任何读梯度的东西（梯度裁剪、记录梯度范数）都必须排在缩放之后。
#
# 下一格在随机的长度上检查这一节的两条规则：事后除与事先除给出相同的梯度；平均的平均恰好在长度不全相同时与按 token 平均不同。
# ~~ en 258af60a
# This is what Megatron-core does. With `calculate_per_token_loss` on, the loss function returns the token-loss sum and the token count, the schedule adds up the counts on the last stage, and after the flush hands them to `finalize_model_grads(model, num_tokens)`. That broadcasts the count from the last stage to the other stages of the pipeline (only the last stage has the labels, so only it knows the count), all-reduces it across the data-parallel replicas, and multiplies every gradient by $1/N$ (`megatron/core/distributed/finalize_model_grads.py`). Each way has its price: dividing up front needs $N$ before the first backward; dividing afterwards leaves the gradients unscaled until the flush, so whatever reads them (gradient clipping, logging the gradient norm) must come after the scaling.
#
# The next cell checks this section's two rules on random lengths: dividing afterwards gives the same gradients as dividing up front, and the mean of means differs from the token mean exactly when the lengths are not all equal.

# %%
def token_rules(m: int, seed: int) -> bool:
    """At m micro-batches of seeded random lengths: 'after' equals 'before', and 'mean/m' equals the token mean
    exactly when every length is the same."""
    rng = random.Random(seed)
    lengths = [rng.randint(1, minipipe.ROWS) for _ in range(m)]
    want = token_mean(lengths)
    same = gap(accumulated(lengths, "after"), accumulated(lengths, "before")) < 1e-12
    equal_lengths = len(set(lengths)) == 1
    return same and (gap(accumulated(lengths, "mean/m"), want) < 1e-12) == equal_lengths


t0 = time.perf_counter()
token_sweep = sweep(token_rules, {"m": (1, 12), "seed": (0, 10 ** 6)}, n=20, seed=4)
token_sweep_s = time.perf_counter() - t0

# %% [text] token-rules
# ~~ zh 74e46e83
# 两条规则在 {checked} 个点上都成立（$m$ 取 1..12，每个 micro-batch 的有效 token 数在 1..{rows} 之间随机，{p} 个 stage，float64，用时 {s:.1f} 秒）。
# ~~ en bdb7d49f
# Both rules hold at the {checked} points checked ($m$ in 1..12, each micro-batch's valid tokens random in 1..{rows}, {p} stages, float64; {s:.1f} s).

# %%
md(claim(token_sweep.holds, text("token-rules", checked=token_sweep.checked, rows=minipipe.ROWS, p=P,
                                 s=token_sweep_s), **token_sweep.figures()))

# %% [markdown] exercise-tokens
# ~~ zh 7b257dd8
# 练习 `token-normalized-loss` 把这件事放到数据并行里：每个副本只看得到自己的 micro-batch，梯度在副本之间按给定的方式 all-reduce，你要让最后的梯度等于整个全局 batch 按 token 平均的梯度。
#
# ```bash
# python practice/judge.py start token-normalized-loss
# ```
# ~~ en 263272db
# The exercise `token-normalized-loss` takes this into data parallelism: each replica sees only its own micro-batches, the gradients are all-reduced across replicas in a given way, and you make the final gradient equal the whole global batch's token-mean gradient.
#
# ```bash
# python practice/judge.py start token-normalized-loss
# ```

# %% [markdown] parity-schedules
# ~~ zh a7f7ac1c
# ## 5. 梯度对齐：逐个参数比较
#
# `run_plan` 在每次运行后都做这件事：把各 stage 的参数梯度收回来，和单进程在整个 batch 上的梯度逐个比较，报告最大绝对误差。同一个检查也适用于一个 rank 持有多个 stage 的交错调度、把反向拆成 B 和 W 的 zero bubble 调度。下一格跑其中三个：
# ~~ en 5f8035df
# ## 5. Gradient parity: parameter by parameter
#
# `run_plan` does this after every run: it collects each stage's parameter gradients and compares them one by one with a single process's gradients on the whole batch, reporting the largest absolute error. The same check applies to interleaved schedules, where a rank holds several stages, and to zero bubble schedules, which split the backward into B and W. The next cell runs three of them:

# %%
parity_runs = {name: run_plan(build(name, p, m, **kw))
               for name, p, m, kw in [("interleaved", 2, 4, {"v": 2}), ("zb-h1", 2, 4, {}), ("zbv", 2, 4, {})]}

# %% [text] parity-schedules-ok
# ~~ zh 39a8cd2e
# 三个调度（$p=2$、$m=4$）的梯度都与单进程一致：{errors}。这是三次运行，不是对所有 plan 的证明；`run_plan` 每次运行都会重新检查。
# ~~ en 8a8bf21a
# All three schedules ($p=2$, $m=4$) match the single process: {errors}. These are three runs, not a proof for every plan; `run_plan` checks again on every run.

# %%
md(claim(all(r.grad_ok for r in parity_runs.values()),
         text("parity-schedules-ok", errors=", ".join(f"{name} {r.max_abs_err:.1e}" for name, r in parity_runs.items())),
         errors={name: r.max_abs_err for name, r in parity_runs.items()}))

# %% [markdown] emulation
# ~~ zh eeae832d
# ## 6. 实测时间线 vs 模拟
#
# 不加控制时，实测时间线反映的是这台机器，而不是代价模型：每个操作只有几十微秒，通信和调度的开销占了大头。`emulate=True` 给每个操作补时到它的模型时长（`unit_ms` 毫秒一个代价单位），而且等补时结束才把输出发出去，这样就在笔记本上复现了一台"每个操作都按代价模型执行"的机器。
# ~~ en c1faf6e2
# ## 6. The measured timeline against the simulated one
#
# Left alone, a measured timeline reflects this machine, not the cost model: each operation takes a few tens of microseconds, and communication and scheduling overheads dominate. `emulate=True` pads every operation to its modelled duration (`unit_ms` milliseconds per cost unit) and sends its output only once the padding is over, which turns a laptop into a machine where every operation runs as the cost model says.

# %% [text] cores-few
# ~~ zh 07bc47b7
# 这台机器有 {cores} 个核，要跑 {p} 个进程：进程得轮流用核，没有补时的实测时间线主要量的是调度。
# ~~ en cbef3ab8
# This machine has {cores} cores for {p} processes: they take turns on the cores, and without padding a measured timeline mostly measures the scheduling.

# %% [text] cores-enough
# ~~ zh 7ad29e97
# 这台机器有 {cores} 个核，{p} 个进程各有一个核可用；但每个操作只有几十微秒，没有补时的实测时间线量到的主要还是通信和调度的开销。
# ~~ en 3bd494e4
# This machine has {cores} cores, one for each of the {p} processes; but each operation takes only tens of microseconds, so without padding a measured timeline still mostly measures communication and scheduling overhead.

# %%
cores = os.cpu_count() or 1
md(claim(P > cores, text("cores-few", cores=cores, p=P), otherwise=text("cores-enough", cores=cores, p=P)))

# %%
costs = Costs(f=1, b=1, w=1)       # full backward = b + w = 2 units
UNIT_MS = 20
emulated = run_plan(plan, costs, emulate=True, unit_ms=UNIT_MS)

# %% [text] emulated
# ~~ zh fd774b34
# 1 个代价单位 = {unit} ms，F = {f:g}、完整反向 B+W = {full:g} 个单位。实测 makespan {measured:.3f} s，模拟 {simulated:.3f} s，比值 {ratio:.2f}；bubble 实测 {bubble:.1%}，模拟 {sim_bubble:.1%}（公式 $(p-1)/(m+p-1)$ = {formula:.1%}）。
# ~~ en 3172549d
# 1 cost unit = {unit} ms, F = {f:g} and a full backward B+W = {full:g} units. Measured makespan {measured:.3f} s, simulated {simulated:.3f} s, a ratio of {ratio:.2f}; bubble measured {bubble:.1%}, simulated {sim_bubble:.1%} (the formula $(p-1)/(m+p-1)$ gives {formula:.1%}).

# %% [text] emulated-longer
# ~~ zh 74400d2b
# 实测比模拟长 {extra:.0f} ms。这次运行只量到了总数：其中多少是进程唤醒、多少是消息传递、多少是 sleep 的误差，它说不出来。
# ~~ en 1163b56b
# The measured run is {extra:.0f} ms longer than the simulated one. This run measures only the total; how much of it is process wake-up, message passing or sleep overshoot, it cannot tell.

# %% [text] emulated-shorter
# ~~ zh 6ba749b8
# 这次实测不比模拟长（差 {extra:.0f} ms）：一次运行里几毫秒的差别在计时和进程调度的误差之内。
# ~~ en ed762bb6
# This time the measured run is not longer than the simulated one (a difference of {extra:.0f} ms): a few milliseconds in one run are within the noise of the timer and of process scheduling.

# %%
print(emulated)
fig = plots.compare([emulated.timeline, emulated.simulated_seconds],
                    titles=["1F1B measured (emulated device time)", "1F1B simulated"])
fig.set_size_inches(10, fig.get_size_inches()[1])
figure.show()
extra_ms = (emulated.measured_makespan - emulated.simulated_makespan) * 1000
md(text("emulated", unit=UNIT_MS, f=costs.f, full=costs.b + costs.w, measured=emulated.measured_makespan,
        simulated=emulated.simulated_makespan, ratio=emulated.ratio, bubble=emulated.timeline.bubble_ratio,
        sim_bubble=emulated.simulated.bubble_ratio, formula=(P - 1) / (M + P - 1)) + " "
   + claim(emulated.ratio >= 1.0, text("emulated-longer", extra=extra_ms), otherwise=text("emulated-shorter", extra=extra_ms)))

# %% [markdown] compare-schedules
# ~~ zh bb84c7c0
# 换几个调度，在同样的代价下比较实测和模拟。下拉框选调度，勾选框同时画出每个 rank 存活的激活份数（micro-batch 的 F 开始时分配，反向结束时释放）：
# ~~ en 1b703758
# A few more schedules, measured and simulated under the same costs. The drop-down picks the schedule; the check box adds each rank's live activations (allocated when a micro-batch's F starts, freed when its backward ends):

# %%
runs = {name: run_plan(build(name, P, M), costs, emulate=True, unit_ms=UNIT_MS) for name in ("gpipe", "zb-h1")}
runs["1f1b"] = emulated


# %%
def measured_vs_simulated(fig, schedule, memory):
    res = runs[schedule]
    cols = 2 if memory else 1
    axes = fig.subplots(2, cols, squeeze=False)
    for row, (tl, what) in enumerate([(res.timeline, "measured"), (res.simulated_seconds, "simulated")]):
        plots.gantt(tl, ax=axes[row][0], title=f"{schedule} {what}: {tl.makespan:.2f} s, bubble {tl.bubble_ratio:.0%}")
        axes[row][0].set_xlim(0, max(res.timeline.makespan, res.simulated_seconds.makespan))
        if memory:
            plots.memory(tl, ax=axes[row][1])


explore(measured_vs_simulated, schedule=["1f1b", "gpipe", "zb-h1"], memory=False, figsize=(10, 4.5))

# %% [markdown] task-peak
# ~~ zh 66c3a7bc
# **任务：** 勾选 `memory`，在三个调度之间切换：哪个调度在实测时间线上的峰值激活最高？填调度名。
# ~~ en 77b8e3f4
# **Task:** tick `memory` and switch between the three schedules: which one has the highest activation peak on its measured timeline? Enter the schedule's name.

# %%
answer_peak_schedule = None   # "1f1b", "gpipe" or "zb-h1"

# %% [text] peaks
# ~~ zh 5c14a4f9
# 实测峰值：{peaks}。这些峰值不是按字节量出来的，而是从每个 rank 实际执行的顺序数出来的（F 开始时加一份，反向结束时减一份），所以只要执行顺序相同，实测和模拟的峰值就一定相同。这里真正检查的是执行器照着 plan 做了：三个调度里每个 rank 执行的顺序都与 plan 一致，峰值也就与模拟相同。
# ~~ en e2a8b4a3
# Measured peaks: {peaks}. These peaks are not measured in bytes but counted from the order each rank executed (one more when an F starts, one fewer when its backward ends), so whenever the order is the same, the measured and simulated peaks must be the same. What this really checks is that the executor followed the plan: in all three schedules every rank executed the plan's order, and so the peaks equal the simulated ones.

# %%
measured_peaks = {name: max(r.timeline.peak_activations) for name, r in runs.items()}
followed = all(r.timeline.ops(k) == [str(s) for s in r.plan.ranks[k]] for r in runs.values() for k in range(P))
md(reveal(answer_peak_schedule, max(measured_peaks, key=measured_peaks.get), claim(
    followed and all(max(r.timeline.peak_activations) == max(r.simulated.peak_activations) for r in runs.values()),
    text("peaks", peaks=", ".join(f"{k} {v:g}" for k, v in measured_peaks.items())),
    followed=followed, peaks=measured_peaks)))

# %% [text] runs-table
# ~~ zh 9cebef1b
# | 调度 | 实测 (s) | 模拟 (s) | 实测/模拟 | 峰值激活 |
# |---|---|---|---|---|
# ~~ en 8eb43b89
# | schedule | measured (s) | simulated (s) | measured / simulated | activation peak |
# |---|---|---|---|---|

# %%
lines = [f"| {name} | {r.measured_makespan:.3f} | {r.simulated_makespan:.3f} | {r.ratio:.2f} | "
         f"{max(r.timeline.peak_activations):g} |" for name, r in runs.items()]
md(text("runs-table") + "\n" + "\n".join(lines))

# %% [markdown] torch
# ~~ zh 83bb4555
# ## 7. 与 torch.distributed.pipelining 并排
#
# PyTorch 自带的流水线库把同样的事情封装成 `PipelineStage` 加调度类。`engine="torch"` 把同一个模型、同一批数据交给 `Schedule1F1B`：每个进程建一个 `PipelineStage`，调用 `schedule.step(...)`；我们包住 stage 的 forward/backward 方法来记时间（同样补时），梯度用同一个单进程参考检查。torch 实际执行的顺序也被记下来，转成一个 course 的 plan，交给模拟器。
# ~~ en 0f0ca6ac
# ## 7. Side by side with torch.distributed.pipelining
#
# PyTorch's own pipelining library wraps the same work in `PipelineStage` and a schedule class. `engine="torch"` hands the same model and the same data to `Schedule1F1B`: each process builds a `PipelineStage` and calls `schedule.step(...)`; we wrap the stage's forward and backward methods to time them (padded the same way), and check the gradients against the same single-process reference. The order torch actually executed is recorded too, turned into a course plan and handed to the simulator.

# %%
torch_run = run_plan(plan, costs, emulate=True, unit_ms=UNIT_MS, engine="torch")

# %% [text] torch-same
# ~~ zh 27f5368e
# torch 的梯度与单进程的最大误差 {err:.1e}，检查通过；它执行的顺序与我们的 1F1B plan 在每个 rank 上都相同。这一次运行里，实测 makespan：我们 {ours:.3f} s，torch {theirs:.3f} s（torch / 我们 = {ratio:.2f}），模拟 {simulated:.3f} s。一次运行排不出两个 runtime 的快慢；`benchmarks/bench_live.py` 在同一次运行里比较两者的单步时间。
# ~~ en 7eb41fd7
# torch's gradients are {err:.1e} away from the single process's at most: the check passes; and on every rank it executed the same order as our 1F1B plan. In this run the measured makespans are {ours:.3f} s for ours and {theirs:.3f} s for torch (torch / ours = {ratio:.2f}), against {simulated:.3f} s simulated. A single run cannot rank the two runtimes; `benchmarks/bench_live.py` compares their step times within one run.

# %%
print(torch_run)
fig = plots.compare([emulated.timeline, torch_run.timeline],
                    titles=["course runtime, 1F1B", f"torch {torch_run.meta['torch_schedule']}"])
fig.set_size_inches(10, fig.get_size_inches()[1])
figure.show()
same = [torch_run.plan.ranks[r] == plan.ranks[r] for r in range(P)]
md(claim(torch_run.grad_ok and all(same),
         text("torch-same", err=torch_run.max_abs_err, ours=emulated.measured_makespan,
              theirs=torch_run.measured_makespan, ratio=torch_run.measured_makespan / emulated.measured_makespan,
              simulated=emulated.simulated_makespan),
         same=same, err=torch_run.max_abs_err))

# %% [markdown] torch-comms
# ~~ zh 92afc5cf
# 两边跑的是同一个顺序，通信的写法却不一样。torch 的 `Schedule1F1B` 到了某个操作才挂对应的 recv，并把"发出上一个前向的输出"和"接收这个反向要的梯度"放进同一批 `batch_isend_irecv`，等整批完成再往下走；gloo 的发送要等对方挂好 recv 才算完成，所以一个 rank 有时还得等邻居走到对应的那一步。我们的执行器开跑前就挂好所有 recv，发送从不原地等待，更接近模拟器"通信不挡计算"的假设。
#
# `Schedule1F1B` 还有一条本课程的 1F1B 没有的限制：$m$ 不能小于 $p$。
# ~~ en 1b8fb8d2
# Both sides run the same order, but they communicate differently. torch's `Schedule1F1B` posts a recv only when its operation comes up, and puts "send the previous forward's output" and "receive the gradient this backward needs" into one `batch_isend_irecv`, waiting for the whole batch before it moves on; a gloo send completes only once the peer has posted its recv, so a rank sometimes waits for its neighbour to reach the matching step. Our executor posts every recv before the run starts and never waits in a send, closer to the simulator's assumption that communication does not hold up computation.
#
# `Schedule1F1B` also has a limit that this course's 1F1B does not: $m$ may not be smaller than $p$.

# %%
from course.torch_bridge import torch_schedule


def torch_refusal(p: int, m: int) -> str | None:
    """The first line of the error torch's Schedule1F1B raises for (p, m), or None when it accepts them."""
    try:
        torch_schedule("Schedule1F1B", p, m)
    except ValueError as err:
        return str(err).strip().splitlines()[0]
    return None


refused = torch_refusal(P, P // 2)
refusal_sweep = sweep(lambda p, m: (torch_refusal(p, m) is not None) == (m < p), {"p": (2, 8), "m": (1, 16)},
                      n=40, seed=5)

# %% [text] torch-refuses
# ~~ zh a5e4df13
# torch 的 `Schedule1F1B` 拒绝 $p={p}$、$m={m}$："{refused}"。它恰好在 $m < p$ 时拒绝（在 $p$ 取 2..8、$m$ 取 1..16 的 {checked} 个点上检查过，本机的 torch {version}）。本库的 `1f1b` 照样能排，只是 stage $s$ 的峰值变成 $\min(m, p-s)$（第 2 章）。
# ~~ en 215b0402
# torch's `Schedule1F1B` refuses $p={p}$, $m={m}$: "{refused}". It refuses exactly when $m < p$ (checked at {checked} points with $p$ in 2..8 and $m$ in 1..16, with this machine's torch {version}). This library's `1f1b` schedules it all the same; stage $s$'s peak just becomes $\min(m, p-s)$ (chapter 2).

# %%
import torch

md(claim(refused is not None and refusal_sweep.holds,
         text("torch-refuses", p=P, m=P // 2, refused=refused, checked=refusal_sweep.checked,
              version=torch.__version__),
         refused=refused, **refusal_sweep.figures()))

# %% [markdown] summary
# ~~ zh c95bc550
# 除了 `Schedule1F1B`，`engine="torch"` 还能对上 `ScheduleGPipe`、`ScheduleInterleaved1F1B`、`ScheduleInterleavedZeroBubble`（即 ZB-H1）、`ScheduleZBVZeroBubble` 和 `ScheduleDualPipeV`。命令行里也能做同样的比较：
#
# ```
# python -m course plan 1f1b -p 4 -m 8 --comms                # 降级后的 plan：每个 rank 的计算、send、recv
# python -m course live 1f1b -p 4 -m 8 --emulate              # 本章的 runtime
# python -m course live 1f1b -p 4 -m 8 --emulate --engine torch
# python -m course live 1f1b -p 4 -m 8 --blocking-send        # 看门狗报告死锁
# torchrun --nproc-per-node 4 -m course.live 1f1b -m 8        # 同一个 worker，在 torchrun 下运行
# ```
#
# ## 怎么讲清楚
#
# 讲"真跑流水线"抓住五件事：
#
# - **通信的顺序**：阻塞 send 要等对方 recv。朴素的阻塞写法（操作结束时 send、开始时 recv）在 1F1B 的稳定阶段里会让相邻 stage 同时互相发送而死锁；奇偶错序、`batch_isend_irecv` 或异步的 `isend` 都能避开。GPipe 上能跑不说明写法对。死锁在哪里，不跑进程就能从降级后的 plan 推出来，再由看门狗的报告证实。
# - **一个 rank 的循环**：预热 $p-s-1$ 个前向，稳定阶段里"前向、和下游交换、反向、和上游交换"，最后做完剩下的反向；`course/minipipe.py` 的 `worker` 就是这个循环（先做练习 `live-1f1b`，再去读它）。
# - **loss 的缩放**：梯度在 micro-batch 之间累加，缩放之后才等于整个 batch 平均 loss 的梯度。token 数相同时乘 $1/m$；不同时，整个 batch 的梯度是 token loss 之和的梯度除以整个 batch 的 token 数：可以事先除，也可以 flush 之后再除（Megatron-core 的做法），两者梯度相同。
# - **梯度对齐**：用单进程参考逐个参数比较梯度，float64 下只应剩下舍入误差。这是最强的单项证据；loss 曲线一致、换调度结果不变也是证据。
# - **实测对照模型**：给每个操作补时到模型时长，并且补时结束才发出输出；这样在笔记本上也能看到一台集群上的时间线，多出来的那一点是通信和调度的开销，一次运行只量得到它的总数。
#
# ## 练习
#
# - `live-1f1b`（★★★）：自己写一个 rank 上的 1F1B 训练步。先用最直接的阻塞 send/recv 写，读看门狗的报告，再改到通过；判题器在多个 gloo 进程上检查梯度、执行顺序和真正的点对点通信。
# - `token-normalized-loss`（★★☆）：数据并行的几个副本各自一个 micro-batch 一次反向，flush 之后、梯度 all-reduce 之后，得到整个全局 batch 按 token 平均的 loss 的梯度。
#
# ```bash
# python practice/judge.py start live-1f1b
# python practice/judge.py start token-normalized-loss
# ```
# ~~ en 8f00922c
# Besides `Schedule1F1B`, `engine="torch"` also matches `ScheduleGPipe`, `ScheduleInterleaved1F1B`, `ScheduleInterleavedZeroBubble` (that is, ZB-H1), `ScheduleZBVZeroBubble` and `ScheduleDualPipeV`. The same comparisons run from the command line:
#
# ```
# python -m course plan 1f1b -p 4 -m 8 --comms                # the lowered plan: each rank's computes, sends, recvs
# python -m course live 1f1b -p 4 -m 8 --emulate              # this chapter's runtime
# python -m course live 1f1b -p 4 -m 8 --emulate --engine torch
# python -m course live 1f1b -p 4 -m 8 --blocking-send        # the watchdog reports the deadlock
# torchrun --nproc-per-node 4 -m course.live 1f1b -m 8        # the same worker under torchrun
# ```
#
# ## How to explain it
#
# Five things carry "running a pipeline for real":
#
# - **The order of communication**: a blocking send waits for the peer's recv. The naive blocking version (send when an operation ends, receive when it starts) makes neighbouring stages send to each other at the same time in 1F1B's steady state, and deadlocks; parity ordering, `batch_isend_irecv` or an asynchronous `isend` each avoid it. Running on GPipe proves nothing. Where it deadlocks follows from the lowered plan without running a process, and the watchdog's report confirms it.
# - **One rank's loop**: a warm-up of $p-s-1$ forwards, then a steady state of "forward, exchange with the next stage, backward, exchange with the previous stage", then the remaining backwards; the `worker` in `course/minipipe.py` is that loop (do the exercise `live-1f1b` first, then read it).
# - **Loss scaling**: gradients accumulate across micro-batches, and only scaled do they equal the gradient of the batch's mean loss. With equal token counts, multiply by $1/m$; otherwise the batch gradient is the gradient of the summed token losses divided by the batch's token count, divided up front or after the flush (Megatron-core's way), with the same gradients.
# - **Gradient parity**: compare every parameter's gradient with a single-process reference; in float64 only rounding error should remain. It is the strongest single piece of evidence; matching loss curves and results that do not change with the schedule are evidence too.
# - **The measurement against the model**: pad every operation to its modelled duration and send its output only after the padding; then a laptop shows a cluster's timeline, and what is left over is communication and scheduling overhead, of which one run measures only the total.
#
# ## Exercises
#
# - `live-1f1b` (★★★): write one rank's 1F1B training step yourself. Start with the plainest blocking send/recv, read the watchdog's report, then change it until it passes; the judge checks the gradients, the order of execution and the real point-to-point traffic on several gloo processes.
# - `token-normalized-loss` (★★☆): several data-parallel replicas each do one backward per micro-batch; after the flush and the gradient all-reduce, get the gradient of the whole global batch's token-mean loss.
#
# ```bash
# python practice/judge.py start live-1f1b
# python practice/judge.py start token-normalized-loss
# ```
