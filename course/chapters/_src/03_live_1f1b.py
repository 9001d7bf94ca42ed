# %% [markdown]
# # 第 3 章　真跑一遍：在 gloo 进程上执行 1F1B
#
# 前两章的 1F1B 只存在于模拟器里。这一章让它在几个真正的进程上跑起来：每个进程是一个 stage，激活和梯度通过 `torch.distributed`（gloo 后端，CPU 就能跑）点对点传递。我们会看到朴素的阻塞写法为什么会死锁、哪些写法不会；一个 rank 的训练循环读起来是什么样子；loss 为什么要除以 micro-batch 数，micro-batch 长度不同时又该除以什么；怎样证明流水线算出的梯度和单进程完全一致；以及实测的时间线怎样和模拟器对上。最后把同一个模型交给 `torch.distributed.pipelining` 的 `Schedule1F1B`，两边并排比较。术语对照见[术语表](glossary.md)。
#
# ## 自测
#
# 1. stage 之间传激活，用阻塞的 `send`/`recv` 一定会死锁吗？什么写法会，什么写法不会？
# 2. 最后一个 stage 为什么要把每个 micro-batch 的 loss 除以 $m$？micro-batch 的有效 token 数不同时呢？
# 3. 怎样证明流水线算出的梯度是对的？为什么比较时的容差可以设得非常小？
# 4. 为什么每条消息都要带一个 tag，标明（类型、stage、micro-batch）？
# 5. 机器的核比进程还少时，实测的时间线怎样才能和模拟器对得上？
#
# <details>
# <summary>参考答案</summary>
#
# 1. 不一定。gloo 的阻塞 `send` 要等对方调用对应的 `recv` 才返回。**朴素的**写法（操作开始时 recv，结束时 send）在 1F1B 的稳定阶段里会死锁：stage $s$ 在把下一个激活发给 $s+1$，而 $s+1$ 正在把一个梯度发回 $s$，两边都卡在 send 上，谁也走不到 recv。换个顺序就不会：
#    - 奇偶错序：每次和邻居交换时，偶数 rank 先发后收、奇数 rank 先收后发（Megatron 不用批量通信时就这样做）；
#    - 批量收发：把同一次交换的 send 和 recv 放进一个 `batch_isend_irecv`（torch 的调度类和 NCCL 都这样做）；
#    - 异步发送：`isend` 立刻返回，接收方什么时候来取都行（本课程的 runtime 这样做）。
# 2. 整个 batch 的 loss 是所有有效 token 的 loss 的平均。梯度在各 micro-batch 之间是累加的，所以每个 micro-batch 的 loss 要先缩放，加起来才等于整个 batch 平均 loss 的梯度；不缩放，梯度就大了 $m$ 倍。每个 micro-batch 的 token 数相同时，缩放就是乘 $1/m$；不同时（padding、packing），要把每个 micro-batch 的 token loss 之和除以整个 batch 的 token 数，先取各自的平均再除以 $m$ 会让短的 micro-batch 权重过大。
# 3. 用同一组权重、同一批数据，在单个进程里把整个模型跑一遍，得到参考梯度，逐个参数比较最大绝对误差。两边做的是同样的运算，只是求和顺序不同；用 float64，剩下的只有舍入误差，比容差小好几个数量级，而真正的错误（比如忘了除以 $m$）会让梯度差出一个倍数，一比就露馅。
# 4. 一个 rank 可能同时有好几条来自同一个邻居的消息在路上（激活和梯度、不同的 micro-batch、多个 stage）。带上 tag，接收方就能按自己的执行顺序去取需要的那一条，不必要求发送顺序和接收顺序一一对应；任何合法的 plan 都能跑。
# 5. 给每个操作补时（emulated device time）：操作真正算完之后 sleep 到它在代价模型里的时长（每个代价单位对应固定的毫秒数），并且等补时结束才把输出发出去。这样真实计算的快慢、进程对 CPU 的争抢都被盖住，实测的 makespan 就落在模拟值附近。
#
# </details>

# %%
import inspect
import os
import re
import time

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import minipipe, plots
from course.claims import claim, reveal
from course.costs import Costs
from course.live import DeadlockDetected, WorkerError, launch, run_plan, stray_workers
from course.live.demos import fail_on, hello
from course.live.model import Chunk, ModelConfig, loss_fn, make_batch
from course.schedules import build
from course.widgets import explore


def md(text: str) -> None:
    """Show prose whose numbers come from this notebook's cells."""
    display(Markdown(text))


P, M = 4, 8

# %% [markdown]
# ## 1. 启动几个进程
#
# `course.live.launch(target, world_size)` 启动 `world_size` 个 worker 进程，在每个进程里建好 gloo 进程组（127.0.0.1、由操作系统挑一个空闲端口），然后调用 `target(rank, world_size)`，把每个 rank 的返回值收回来。几个要点：
#
# - worker 是新进程，它按名字 import `target`，所以 `target` 必须写在 `.py` 模块里，不能写在 notebook 的单元格里；
# - 启动器在后台留着一个已经 import 好 torch 的"孵化"进程（zygote），每次从它 fork 出 worker，所以只有第一次启动要等 import；
# - 某个 rank 抛了异常，异常连同它的 rank 和 traceback 一起传回来；出错、超时或死锁时，整个作业的进程组被一起杀掉，不留孤儿进程。

# %%
t0 = time.perf_counter()
for row in launch(hello, P):
    print(row)
first_s = time.perf_counter() - t0
t0 = time.perf_counter()
launch(hello, P, echo=False)
again_s = time.perf_counter() - t0
md(f"{P} 个进程各自把自己的 rank 加进 `all_reduce`，每个人都得到 {sum(range(P))}。"
   + claim(again_s < first_s, f"第一次启动用了 {first_s:.1f} 秒（孵化进程要先 import torch），再启动一次只用了 {again_s:.2f} 秒。",
           otherwise=f"第一次启动用了 {first_s:.1f} 秒，第二次 {again_s:.2f} 秒：孵化进程这次已经在后台等着了，"
                     "第二次没有更快，说明这台机器此刻很忙。"))

# %% [markdown]
# 一个 rank 出错时，其他 rank 还卡在 barrier 里等它。启动器发现出错的进程，结束整个作业，报告是哪个 rank、什么异常：

# %%
try:
    launch(fail_on, P, args=(2,), timeout=30)
except WorkerError as err:
    print(f"rank {err.rank}: {err.exc_type}: {err.message}")
    print(err.traceback.strip().splitlines()[-1])

# %% [markdown]
# ## 2. 在多个进程上跑 1F1B
#
# `run_plan(plan)` 把第 2 章的 plan 原样交给每个进程执行。模型是一串 `Linear + Tanh` 块（宽度、每个 stage 的块数、随机种子见 `ModelConfig`），float64；每个进程只建自己那一段。执行器对每个操作做这些事：
#
# - **F**：第一个 stage 取自己的那份输入，其他 stage 取上一个 stage 发来的激活（`requires_grad_()`，反向时才能对它求梯度），算完用 `isend` 发给下一个 stage；最后一个 stage 算 loss 并乘以 $1/m$；
# - **B**：最后一个 stage 直接对缩放后的 loss 求导；其他 stage 取下一个 stage 发回的梯度，用 `torch.autograd.grad` 同时得到参数梯度和输入梯度，输入梯度发回上一个 stage；
# - 每条消息的 tag 由（类型、micro-batch、接收它的 stage）算出；所有要收的消息在开跑前就用 `irecv` 挂好，到了某个操作，只等它自己那一条。

# %%
plan = build("1f1b", P, M)
live_cfg = ModelConfig()            # what run_plan uses by default
live = run_plan(plan)
print(live)
for r in range(P):
    print(f"rank {r}: {' '.join(live.timeline.ops(r))}")
same_order = all(live.timeline.ops(r) == [str(s) for s in plan.ranks[r]] for r in range(P))
md(claim(same_order and live.grad_ok,
         f"模型：宽度 {live_cfg.width}，每个 stage {live_cfg.blocks_per_stage} 块，每个 micro-batch {live_cfg.microbatch_size} 个样本，"
         f"{live_cfg.dtype}。每个 rank 实际执行的顺序与 plan 完全一致；"
         f"所有参数梯度与单进程参考的最大绝对误差是 {live.max_abs_err:.1e}（容差 {live.tolerance:g}），检查通过。",
         same_order=same_order, max_abs_err=live.max_abs_err))

# %% [markdown]
# ## 3. 阻塞发送：朴素的写法会死锁，换个顺序就不会
#
# 把 `isend`/预先挂好的 `irecv` 换成"在操作里阻塞地 `send`、用到时才 `recv`"（朴素的阻塞写法），看看会发生什么。`blocking_send=True` 就是这个教学模式。启动器里有一个看门狗：所有没做完的 rank 都卡在通信里、几秒钟没有任何进展（状态没变，也没用 CPU），就判为死锁，杀掉整个作业，并报告每个 rank 卡在哪个操作的哪次 send/recv 上。

# %%
t0 = time.perf_counter()
try:
    run_plan(plan, blocking_send=True)
    deadlock = None
except DeadlockDetected as err:
    deadlock = err
    print(err)
detect_s = time.perf_counter() - t0


def send_cycles(states: dict[int, str]) -> list[tuple[int, int]]:
    """Pairs of ranks that are each blocked in a send to the other, read from the watchdog's report."""
    sends_to = {r: int(m.group(1)) for r, text in states.items() if (m := re.search(r"blocked in send\b.*? to rank (\d+)", text))}
    return sorted({tuple(sorted((a, b))) for a, b in sends_to.items() if sends_to.get(b) == a})


cycles = send_cycles(deadlock.states) if deadlock else []
md(claim(deadlock is not None and bool(cycles) and not stray_workers()
         and all("blocked in send" in text for text in deadlock.states.values()),
         f"看门狗在 {detect_s:.1f} 秒内报告了死锁，作业结束后没有残留的 worker 进程。从报告里读出互相等待的环："
         + "；".join(f"rank {a} 卡在发给 rank {b} 的 send 上，rank {b} 卡在发给 rank {a} 的 send 上" for a, b in cycles)
         + "。gloo 的阻塞 send 要等对方 recv，双方都在 send，谁也走不到 recv。其余 rank 排着队，卡在发给下游的 send 上。",
         cycles=cycles))

# %% [markdown]
# 异步发送打破了这个环：`isend` 立刻返回，倒数第二个 rank 接着做下一个操作，去收最后一个 rank 发回的梯度。同样的阻塞写法，GPipe 不会卡住（相邻 stage 不会同时互相发送），所以"在 GPipe 上能跑"证明不了阻塞写法是对的：

# %%
gpipe_blocking = run_plan(build("gpipe", P, 4), blocking_send=True)
print(gpipe_blocking)

# %% [markdown]
# ### 一个 rank 的循环，以及不死锁的阻塞写法
#
# `run_plan` 能执行任意 plan，代码也就长一些。只跑 1F1B 的话，一个 rank 的整个训练步是一个很短的循环。`course.minipipe.worker` 就是这样一个循环：每个 rank 一个 stage（Linear + Tanh），Megatron 的不交错 1F1B，通信全用**阻塞**的 `send`/`recv`。`exchange(send, to, frm)` 是和邻居的一次交换：发一个张量、收一个张量。`comm` 决定交换里两个调用的先后：
#
# - `naive`：先 send 后 recv，就是上面的朴素写法；
# - `parity`：偶数 rank 先 send 后 recv，奇数 rank 先 recv 后 send；
# - `batched`：send 和 recv 放进同一个 `batch_isend_irecv`，一起等它们完成。

# %%
print(inspect.getsource(minipipe.worker))

# %% [markdown]
# **预测：** 4 个进程、8 个 micro-batch，用 `comm="parity"`（仍然全是阻塞的 send/recv），会死锁吗？写 `True`（会）或 `False`（不会）。

# %%
guess_parity_deadlocks = None   # True 或 False

# %%
LENGTHS = [minipipe.ROWS] * M      # every micro-batch full: the plain 1/m case
want = minipipe.reference(P, M, LENGTHS)
outcome = {}
for comm in minipipe.COMMS:
    try:
        outcome[comm] = minipipe.max_error(minipipe.run(P, M, comm, LENGTHS), want)
    except DeadlockDetected as err:
        outcome[comm] = send_cycles(err.states)
deadlocked = {c: o for c, o in outcome.items() if isinstance(o, list)}
errors = {c: o for c, o in outcome.items() if not isinstance(o, list)}
md(reveal(guess_parity_deadlocks, "parity" in deadlocked, claim(
    set(deadlocked) == {"naive"} and bool(deadlocked["naive"]) and max(errors.values()) < 1e-12,
    "`naive` 死锁，环在 " + "、".join(f"rank {a} 与 rank {b}" for a, b in deadlocked.get("naive", [])) + " 之间；"
    f"`parity` 和 `batched` 都跑完了，梯度与单进程参考的最大误差分别是 {errors.get('parity', float('nan')):.1e} "
    f"和 {errors.get('batched', float('nan')):.1e}。"
    "奇偶错序里，每对相邻的 rank 一个是偶数一个是奇数，总有一边先在 recv，环就断了。所以死锁的不是\"阻塞\"本身，而是朴素的调用顺序。"
    "NCCL 上同样的问题更常见，所以 torch 的调度类一律用 `batch_isend_irecv`。", outcome=outcome)))

# %% [markdown]
# ## 4. loss 缩放：为什么除以 $m$
#
# 整个 batch 的 loss 是各 micro-batch loss 的平均。在单个进程里直接验证。

# %% [markdown]
# **预测：** 每个 micro-batch 的 loss 不缩放、直接反向累加，得到的梯度是正确值的几倍？

# %%
guess_unscaled = None   # 你的预测

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
          f"每个 micro-batch 的 loss 除以 $m={M}$ 再累加：与整个 batch 的梯度相差 {err_scaled:.1e}。"
          f"不除：梯度是正确值的 {ratio:.3f} 倍，正好是 $m$。流水线最后一个 stage 报告的平均 loss 是 "
          f"{sum(live.losses) / len(live.losses):.6f}，单进程整个 batch 的 loss 是 {batch_loss:.6f}。",
          err_scaled=err_scaled, ratio=ratio)))

# %% [markdown]
# ### micro-batch 长度不同：按 token 数归一化
#
# 除以 $m$ 只在每个 micro-batch 贡献同样多个 token 时才对。语言模型的 micro-batch 常常带 padding 或者是拼接（packing）出来的，有效 token 数各不相同。整个 batch 的 loss 是**所有有效 token** 的平均，所以每个 micro-batch 应该把自己的 token loss 求和，再除以**整个 batch** 的 token 数；先取各自的平均、再除以 $m$，短的 micro-batch 就被放大了。这是一个真实、常见的 bug（2024 年 Hugging Face Transformers 的梯度累积就因此修过一次）。
#
# `minipipe` 的最后一个 stage 就是这样算的（`token_loss`）。下面给 8 个 micro-batch 不同的有效 token 数。

# %% [markdown]
# **预测：** 有效 token 数不同时，"每个 micro-batch 取自己的平均 loss、再除以 $m$"得到的梯度，和整个 batch 按 token 平均的梯度一样吗？写 `True` 或 `False`。

# %%
guess_mean_of_means_ok = None   # True 或 False

# %%
UNEVEN = [4, 1, 3, 2, 4, 4, 2, 3][:M] + [minipipe.ROWS] * max(0, M - 8)
xs, ys, mask = minipipe.batch(M, UNEVEN)
one_stage = minipipe.stage(0)


def stage_grads(loss):
    one_stage.zero_grad()
    loss.backward()
    return [q.grad.clone() for q in one_stage.parameters()]


token_mean = stage_grads(minipipe.token_loss(one_stage(xs), ys, mask, mask.sum()))
mean_of_means = stage_grads(sum(minipipe.token_loss(one_stage(xs[i]), ys[i], mask[i], mask[i].sum())
                                for i in range(M)) / M)
gap = max((a - b).abs().max().item() for a, b in zip(mean_of_means, token_mean))
pipeline_err = minipipe.max_error(minipipe.run(P, M, "parity", UNEVEN), minipipe.reference(P, M, UNEVEN))
md(reveal(guess_mean_of_means_ok, gap < 1e-12, claim(gap > 1e-6 and pipeline_err < 1e-12,
          f"有效 token 数 {UNEVEN}：平均的平均与按 token 平均的梯度差了 {gap:.2e}，不一样。"
          f"{P} 个进程上的 `minipipe`（每个 micro-batch 的 token loss 之和除以整个 batch 的 {int(mask.sum())} 个 token）"
          f"与单进程在整个 batch 上按 token 平均的梯度相差 {pipeline_err:.1e}：只剩舍入误差。"
          "流水线里最后一个 stage 必须在第一个反向之前就知道整个 batch 的 token 数：数据加载时算好，跨数据并行时还要先做一次 all-reduce。",
          gap=gap, pipeline_err=pipeline_err)))


# %% [markdown]
# ## 5. 梯度对齐：逐个参数比较
#
# `run_plan` 在每次运行后都做这件事：把各 stage 的参数梯度收回来，和单进程在整个 batch 上的梯度逐个比较，报告最大绝对误差。同一个检查对所有调度都成立，包括一个 rank 持有多个 stage 的交错调度、把反向拆成 B 和 W 的零气泡调度：

# %%
for name, p, m, kw in [("interleaved", 2, 4, {"v": 2}), ("zb-h1", 2, 4, {}), ("zbv", 2, 4, {})]:
    res = run_plan(build(name, p, m, **kw))
    print(f"{name:<12} p={p} m={m}  max abs err {res.max_abs_err:.1e}  {'OK' if res.grad_ok else 'MISMATCH'}")

# %% [markdown]
# ## 6. 实测时间线 vs 模拟
#
# 不加控制时，实测时间线反映的是这台机器，而不是代价模型：每个操作只有几十微秒，通信和调度的开销占了大头。`emulate=True` 给每个操作补时到它的模型时长（`unit_ms` 毫秒一个代价单位），而且等补时结束才把输出发出去，这样就在笔记本上复现了一台"每个操作都按代价模型执行"的机器。

# %%
cores = os.cpu_count() or 1
md(claim(P > cores, f"这台机器有 {cores} 个核，要跑 {P} 个进程：进程得轮流用核，没有补时的实测时间线主要量的是调度。",
         otherwise=f"这台机器有 {cores} 个核，{P} 个进程各有一个核可用；但每个操作只有几十微秒，没有补时的实测时间线"
                   "量到的主要还是通信和调度的开销。"))

# %%
costs = Costs(f=1, b=1, w=1)       # full backward = b + w = 2 units
UNIT_MS = 20
emulated = run_plan(plan, costs, emulate=True, unit_ms=UNIT_MS)
print(emulated)
fig = plots.compare([emulated.timeline, emulated.simulated_seconds],
                    titles=["1F1B measured (emulated device time)", "1F1B simulated"])
fig.set_size_inches(10, fig.get_size_inches()[1])
plt.show()
md(f"1 个代价单位 = {UNIT_MS} ms，F = {costs.f:g}、完整反向 B+W = {costs.b + costs.w:g} 个单位。"
   f"实测 makespan {emulated.measured_makespan:.3f} s，模拟 {emulated.simulated_makespan:.3f} s，"
   f"比值 {emulated.ratio:.2f}；bubble 实测 {emulated.timeline.bubble_ratio:.1%}，"
   f"模拟 {emulated.simulated.bubble_ratio:.1%}（公式 $(p-1)/(m+p-1)$ = {(P - 1) / (M + P - 1):.1%}）。"
   + claim(emulated.ratio >= 1.0, "实测略长：每个操作多出的是进程唤醒、消息传递和 sleep 的误差，沿着关键路径一路累加。",
           otherwise="这次实测甚至不比模拟长：计时误差在这里互相抵消了。"))

# %% [markdown]
# 换几个调度，在同样的代价下比较实测和模拟。下拉框选调度，勾选框同时画出每个 rank 存活的激活份数（micro-batch 的 F 开始时分配，反向结束时释放）：

# %%
runs = {name: run_plan(build(name, P, M), costs, emulate=True, unit_ms=UNIT_MS) for name in ("gpipe", "zb-h1")}
runs["1f1b"] = emulated


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

# %% [markdown]
# **任务：** 勾选 `memory`，在三个调度之间切换：哪个调度在实测时间线上的峰值激活最高？填调度名。

# %%
answer_peak_schedule = None   # "1f1b"、"gpipe" 或 "zb-h1"

# %%
measured_peaks = {name: max(r.timeline.peak_activations) for name, r in runs.items()}
md(reveal(answer_peak_schedule, max(measured_peaks, key=measured_peaks.get),
          "实测峰值：" + "，".join(f"{k} {v:g} 份" for k, v in measured_peaks.items())
          + claim(all(max(r.timeline.peak_activations) == max(r.simulated.peak_activations) for r in runs.values()),
                  "。峰值只取决于执行顺序，和机器快慢无关，所以实测与模拟一样。")))

# %%
lines = [f"| {name} | {r.measured_makespan:.3f} | {r.simulated_makespan:.3f} | {r.ratio:.2f} | "
         f"{max(r.timeline.peak_activations):g} |" for name, r in runs.items()]
md("| 调度 | 实测 (s) | 模拟 (s) | 实测/模拟 | 峰值激活 |\n|---|---|---|---|---|\n" + "\n".join(lines))

# %% [markdown]
# ## 7. 与 torch.distributed.pipelining 并排
#
# PyTorch 自带的流水线库把同样的事情封装成 `PipelineStage` 加调度类。`engine="torch"` 把同一个模型、同一批数据交给 `Schedule1F1B`：每个进程建一个 `PipelineStage`，调用 `schedule.step(...)`；我们包住 stage 的 forward/backward 方法来记时间（同样补时），梯度用同一个单进程参考检查。torch 实际执行的顺序也被记下来，转成一个 course 的 plan，交给模拟器。

# %%
torch_run = run_plan(plan, costs, emulate=True, unit_ms=UNIT_MS, engine="torch")
print(torch_run)
fig = plots.compare([emulated.timeline, torch_run.timeline],
                    titles=["course runtime, 1F1B", f"torch {torch_run.meta['torch_schedule']}"])
fig.set_size_inches(10, fig.get_size_inches()[1])
plt.show()
same = [torch_run.plan.ranks[r] == plan.ranks[r] for r in range(P)]
md(claim(torch_run.grad_ok and all(same),
         f"torch 的梯度与单进程的最大误差 {torch_run.max_abs_err:.1e}，检查通过；它执行的顺序与我们的 1F1B plan 在每个 rank 上都相同；"
         f"实测 makespan：我们 {emulated.measured_makespan:.3f} s，torch {torch_run.measured_makespan:.3f} s"
         f"（torch / 我们 = {torch_run.measured_makespan / emulated.measured_makespan:.2f}），"
         f"两者都与模拟的 {emulated.simulated_makespan:.3f} s 比较。", same=same, err=torch_run.max_abs_err))

# %% [markdown]
# 两边跑的是同一个顺序，通信的写法却不一样。torch 的 `Schedule1F1B` 到了某个操作才挂对应的 recv，并把"发出上一个前向的输出"和"接收这个反向要的梯度"放进同一批 `batch_isend_irecv`，等整批完成再往下走；gloo 的发送要等对方挂好 recv 才算完成，所以一个 rank 有时还得等邻居走到对应的那一步。我们的执行器开跑前就挂好所有 recv，发送从不原地等待，更接近模拟器"通信不挡计算"的假设。这类差别在机器繁忙时最明显；不补时、模型大一些时，`benchmarks/bench_live.py` 在同一次运行里比较两者的单步时间。
#
# `Schedule1F1B` 还有一条本课程的 1F1B 没有的限制：$m$ 不能小于 $p$。

# %%
from course.torch_bridge import torch_schedule  # noqa: E402  (imports torch)

try:
    torch_schedule("Schedule1F1B", P, P // 2)
    refused = None
except ValueError as err:
    refused = str(err).strip().splitlines()[0]
md(claim(refused is not None, f"torch 的 `Schedule1F1B` 拒绝 $p={P}$、$m={P // 2}$：“{refused}”。本库的 `1f1b` 照样能排，"
         f"只是 stage $s$ 的峰值变成 $\\min(m, p-s)$（第 2 章）。", refused=refused))

# %% [markdown]
# 除了 `Schedule1F1B`，`engine="torch"` 还能对上 `ScheduleGPipe`、`ScheduleInterleaved1F1B`、`ScheduleInterleavedZeroBubble`（即 ZB-H1）、`ScheduleZBVZeroBubble` 和 `ScheduleDualPipeV`。命令行里也能做同样的比较：
#
# ```
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
# - **通信的顺序**：阻塞 send 要等对方 recv。朴素的阻塞写法（操作结束时 send、开始时 recv）在 1F1B 的稳定阶段里会让相邻 stage 同时互相发送而死锁；奇偶错序、`batch_isend_irecv` 或异步的 `isend` 都能避开。GPipe 上能跑不说明写法对。
# - **一个 rank 的循环**：预热 $p-s-1$ 个前向，稳定阶段里"前向、和下游交换、反向、和上游交换"，最后做完剩下的反向；`course.minipipe.worker` 就是这个循环（上面打印了它的全部源码）。
# - **loss 的缩放**：梯度在 micro-batch 之间累加，缩放之后才等于整个 batch 平均 loss 的梯度。token 数相同时乘 $1/m$；不同时用整个 batch 的 token 数去除每个 micro-batch 的 token loss 之和。
# - **梯度对齐**：用单进程参考逐个参数比较梯度，float64 下只应剩下舍入误差。这是最强的单项证据；loss 曲线一致、换调度结果不变也是证据。
# - **实测对照模型**：给每个操作补时到模型时长，并且补时结束才发出输出；这样在笔记本上也能看到一台集群上的时间线，多出来的那一点就是通信和调度的真实开销。
#
# ## 练习
#
# - `live-1f1b`（★★★）：自己写一个 rank 上的 1F1B 训练步。先用最直接的阻塞 send/recv 写，读看门狗的报告，再改到通过；
#   判题器在多个 gloo 进程上检查梯度、执行顺序和真正的点对点通信。
# - `token-normalized-loss`（★★☆）：micro-batch 长短不一时，一个 micro-batch 一次 backward，累加出整个 batch 按 token
#   平均的 loss 的梯度。
#
# ```bash
# python practice/judge.py start live-1f1b
# python practice/judge.py start token-normalized-loss
# ```
