# %% [markdown]
# # 第 3 章　真跑一遍：在 gloo 进程上执行 1F1B
#
# 前两章的 1F1B 只存在于模拟器里。这一章让它在几个真正的进程上跑起来：每个进程是一个 stage，激活和梯度通过 `torch.distributed`（gloo 后端，CPU 就能跑）点对点传递。我们会看到异步发送为什么是必需的、loss 为什么要除以 micro-batch 数、怎样证明流水线算出的梯度和单进程完全一致，以及实测的时间线怎样和模拟器对上。最后把同一个模型交给 `torch.distributed.pipelining` 的 `Schedule1F1B`，两边并排比较。
#
# ## 自测
#
# 1. stage 之间传激活，为什么要用异步的 `isend`，而不是阻塞的 `send`？
# 2. 最后一个 stage 为什么要把每个 micro-batch 的 loss 除以 $M$？
# 3. 怎样证明流水线算出的梯度是对的？为什么比较时的容差可以设得非常小？
# 4. 为什么每条消息都要带一个 tag，标明（类型、stage、micro-batch）？
# 5. 笔记本的核比进程还少，实测的时间线怎样才能和模拟器对得上？
#
# <details>
# <summary>参考答案</summary>
#
# 1. gloo 的阻塞 `send` 要等对方调用对应的 `recv` 才返回。1F1B 的稳定段里，stage $s$ 在把下一个激活发给 $s+1$，而 $s+1$ 正在把一个梯度发回 $s$：两边都卡在 send 上，谁也走不到 recv，这就是死锁。`isend` 立刻返回，发送在后台完成，接收方什么时候来取都行。
# 2. 整个 batch 的 loss 是各 micro-batch loss 的平均（micro-batch 大小相同）。梯度在各 micro-batch 之间是累加的，所以每个 micro-batch 的 loss 先乘 $1/M$，加起来才等于整个 batch 平均 loss 的梯度；不缩放，梯度就大了 $M$ 倍。
# 3. 用同一组权重、同一批数据，在单个进程里把整个模型跑一遍，得到参考梯度，逐个参数比较最大绝对误差。两边做的是同样的运算，只是求和顺序不同；用 float64，剩下的只有舍入误差，比容差小好几个数量级，而真正的错误（比如忘了除以 $M$）会让梯度差出一个倍数，一比就露馅。
# 4. 一个 rank 可能同时有好几条来自同一个邻居的消息在路上（激活和梯度、不同的 micro-batch、多个 stage）。带上 tag，接收方就能按自己的执行顺序去取需要的那一条，不必要求发送顺序和接收顺序一一对应；任何合法的 plan 都能跑。
# 5. 给每个操作补时（emulated device time）：操作真正算完之后 sleep 到它在代价模型里的时长（每个代价单位对应固定的毫秒数），并且等补时结束才把输出发出去。这样真实计算的快慢、进程对 CPU 的争抢都被盖住，实测的 makespan 就落在模拟值附近。
#
# </details>

# %%
import time

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import plots
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
md(f"{P} 个进程各自把自己的 rank 加进 `all_reduce`，每个人都得到 {sum(range(P))}。"
   f"第一次启动用了 {first_s:.1f} 秒（孵化进程要先 import torch），再启动一次只用了 {time.perf_counter() - t0:.2f} 秒。")

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
# - **F**：第一个 stage 取自己的那份输入，其他 stage 取上一个 stage 发来的激活（`requires_grad_()`，反向时才能对它求梯度），算完用 `isend` 发给下一个 stage；最后一个 stage 算 loss 并乘以 $1/M$；
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
md(f"模型：宽度 {live_cfg.width}，每个 stage {live_cfg.blocks_per_stage} 块，每个 micro-batch {live_cfg.microbatch_size} 个样本，"
   f"{live_cfg.dtype}。每个 rank 实际执行的顺序与 plan {'完全一致' if same_order else '不一致'}；"
   f"所有参数梯度与单进程参考的最大绝对误差是 {live.max_abs_err:.1e}（容差 {live.tolerance:g}），"
   f"检查{'通过' if live.grad_ok else '没有通过'}。")

# %% [markdown]
# ## 3. 为什么发送必须是异步的
#
# 把 `isend`/预先挂好的 `irecv` 换成"在操作里阻塞地 `send`、用到时才 `recv`"，看看会发生什么。`blocking_send=True` 就是这个教学模式。启动器里有一个看门狗：所有没做完的 rank 都卡在通信里、几秒钟没有任何进展（状态没变，也没用 CPU），就判为死锁，杀掉整个作业，并报告每个 rank 卡在哪个操作的哪次 send/recv 上。

# %%
t0 = time.perf_counter()
try:
    run_plan(plan, blocking_send=True)
    deadlock = None
except DeadlockDetected as err:
    deadlock = err
    print(err)
detect_s = time.perf_counter() - t0
md(f"{'看门狗在 ' + format(detect_s, '.1f') + ' 秒内报告了死锁' if deadlock else '没有死锁（意外！）'}；"
   f"作业结束后残留的 worker 进程：{len(stray_workers())} 个。")

# %% [markdown]
# 读一下报告：最后一个 stage 做完第一个前向马上做它的反向，卡在把梯度发回上一个 rank 的 send 上；上一个 rank 此刻在做下一个 micro-batch 的前向，卡在把激活发给最后一个 rank 的 send 上。gloo 的阻塞 send 要等对方 recv，而双方都在 send，谁也走不到 recv，两边互相等。更上游的 rank 排着队，也都卡在 send 上。
#
# 异步发送打破了这个环：`isend` 立刻返回，倒数第二个 rank 接着做下一个操作，去收最后一个 rank 发回的梯度。同样的阻塞写法，GPipe 不会卡住（相邻 stage 不会同时互相发送），所以"在 GPipe 上能跑"证明不了阻塞写法是对的：

# %%
gpipe_blocking = run_plan(build("gpipe", P, 4), blocking_send=True)
print(gpipe_blocking)

# %% [markdown]
# ## 4. loss 缩放：为什么除以 $M$
#
# 整个 batch 的 loss 是各 micro-batch loss 的平均。在单个进程里直接验证：不缩放时累加出的梯度正好是整个 batch 梯度的 $M$ 倍。

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
md(f"每个 micro-batch 的 loss 除以 $M={M}$ 再累加：与整个 batch 的梯度相差 {err_scaled:.1e}。"
   f"不除：梯度是正确值的 {ratio:.3f} 倍。流水线最后一个 stage 报告的平均 loss 是 "
   f"{sum(live.losses) / len(live.losses):.6f}，单进程整个 batch 的 loss 是 {batch_loss:.6f}。")

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
# 不加控制时，实测时间线反映的是这台机器：几个进程抢两个核，每个操作只有几十微秒，通信和调度的开销占了大头，和代价模型毫无关系。`emulate=True` 给每个操作补时到它的模型时长（`unit_ms` 毫秒一个代价单位），而且等补时结束才把输出发出去，这样就在笔记本上复现了一台"每个操作都按代价模型执行"的机器。

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
   f"实测略长：每个操作多出的是进程唤醒、消息传递和 sleep 的误差，沿着关键路径一路累加。")

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
md(f"torch 的梯度与单进程的最大误差 {torch_run.max_abs_err:.1e}（{'通过' if torch_run.grad_ok else '没有通过'}）；"
   f"它执行的顺序与我们的 1F1B plan {'在每个 rank 上都相同' if all(same) else '有 ' + str(same.count(False)) + ' 个 rank 不同'}；"
   f"实测 makespan：我们 {emulated.measured_makespan:.3f} s，torch {torch_run.measured_makespan:.3f} s"
   f"（torch / 我们 = {torch_run.measured_makespan / emulated.measured_makespan:.2f}），"
   f"两者都与模拟的 {emulated.simulated_makespan:.3f} s 比较。")

# %% [markdown]
# 两边跑的是同一个顺序，通信的写法却不一样。torch 的 `Schedule1F1B` 到了某个操作才挂对应的 recv，并把"发出上一个前向的输出"和"接收这个反向要的梯度"放进同一批 `batch_isend_irecv`，等整批完成再往下走；gloo 的发送要等对方挂好 recv 才算完成，所以一个 rank 有时还得等邻居走到对应的那一步。我们的执行器开跑前就挂好所有 recv，发送从不原地等待，更接近模拟器"通信不挡计算"的假设。这类差别在机器繁忙时最明显；不补时、模型大一些时，`benchmarks/bench_live.py` 在同一次运行里比较两者的单步时间。
#
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
# 讲"真跑流水线"抓住四件事。第一，发送要异步：阻塞 send 要等对方 recv，1F1B 的稳定段里相邻 stage 会同时互相发送，阻塞写法必然死锁；GPipe 上能跑不说明写法对。第二，loss 除以 micro-batch 数 $M$：梯度在 micro-batch 之间累加，缩放之后才等于整个 batch 平均 loss 的梯度。第三，用单进程参考逐个参数比较梯度，float64 下只应剩下舍入误差，这是流水线实现正确的唯一硬证据。第四，实测时间线要和模型对照，就给每个操作补时到模型时长，并且补时结束才发出输出；这样在笔记本上也能看到一台集群上的时间线，而多出来的那一点就是通信和调度的真实开销。
#
# ## 练习
#
# - `python practice/judge.py start live-1f1b`：自己写一个 rank 上的 1F1B 训练步（`isend`/`recv`、loss 缩放），判题器在多个 gloo 进程上检查梯度和执行顺序；写成阻塞发送会被看门狗抓到。
