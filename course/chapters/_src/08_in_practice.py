# %% [markdown] intro
# ~~ zh 5fc5edd3
# # 第 8 章　实战：读 trace、找 hang、对上 torch、放进 3D 并行
#
# 前面几章的调度都在模拟器里排得整整齐齐。真实训练里拿到的是一条实测的 trace：哪里空了、为什么空、hang 住时停在哪，都要自己读出来。这一章在 $p$ 个 gloo 进程上真跑 plan（$p$ 见第 1 节的代码），把 trace 的空闲拆成调度本身的 bubble、不均衡、通信和开销，再看显存；然后故意造一个 hang，看怎样找到它；接着把课程的 plan 对应到 `torch.distributed.pipelining` 的 action；再看 PP 在 TP、DP 之间的位置；最后是一个"PP 门诊"：工程师最常问的六个问题，每个都配一段能跑的复现和检查。术语见[术语表](glossary.md)。
#
# **在浏览器里（浏览器版）：** 这一章的多进程真跑、卡死的排查和与 torch.distributed.pipelining 的对照都要 torch，只有桌面版（`make lab`）能跑；浏览器里它会停在第一个需要 torch 的格子。
#
# ## 自测
#
# 1. 一条实测时间线上的空闲，哪些算 bubble，哪些算 stage 不均衡？
# 2. 只看 trace，怎样估出点对点通信的延迟？这个估计在一台笔记本上能信几分？
# 3. 多进程流水线挂住了，第一步该拿到什么信息？
# 4. 课程 plan 里的 `B3`，在 torch 的 action 里写成什么？
# 5. 为什么常见的布局是"TP 在节点内、PP 跨节点、DP 在最外层"？
# 6. 把每个 micro-batch 的 loss 直接相加（忘了除以 $m$），用 Adam 训练时为什么看不出来？
#
# <details>
# <summary>参考答案</summary>
#
# 1. 只看空闲的位置分不出来：理想的 1F1B 里 rank 0 第一个操作之前和最后一个操作之后都没有空闲，它的 bubble 全部夹在操作中间。可靠的做法是把同一个 plan 重放两遍：一遍用 trace 里量到的每个操作的时长，一遍让每个操作都取同类操作的平均时长。后者的空闲是调度本身的 bubble，前者多出来的是不均衡，实测比前者再多出来的是通信和各种开销。
# 2. 不要直接拿两个进程的时间戳相减（时钟有偏差）。在同一个 rank 上量一次往返：从发出激活到收回梯度等了多久，减去下游处理这个 micro-batch 用的时间（也在下游自己的时钟上量），剩下的一半是单程延迟加上计时误差。本机 gloo 的真实延迟只有几十微秒，比补时操作自身的抖动还小，所以在笔记本上这个估计量到的主要是计时误差，只能当上界用。
# 3. 每个 rank 此刻停在哪个操作、在等（或在发）哪条消息：看门狗或超时报告、各进程的 Python 栈（py-spy dump、faulthandler）。再拿它去对 plan 的依赖，找出互相等待的环，或者找出那个"已经做完了"的 rank。
# 4. plan 里有 W 时，`B` 是输入梯度，torch 写作 `I`（如 `2I3`，数字依次是 stage、micro-batch）；没有 W 时，`B` 是完整反向，torch 也写 `B`（如 `2B3`）。
# 5. TP 每层都要做 all-reduce，通信量最大、对带宽最敏感，只能放在 NVLink 连着的节点内；PP 每个 micro-batch 只在相邻 stage 间传一次激活，量小、可以跨节点；DP 每次迭代只做一次梯度 all-reduce，而且能和反向重叠，放在最外层。
# 6. 梯度变成了正确值的 $m$ 倍，而 Adam 的更新量对梯度乘上一个常数不敏感（一阶矩和二阶矩的平方根一起放大）。SGD 的步长、梯度裁剪的阈值和记录下来的 loss 都会跟着变成 $m$ 倍，换掉优化器或改了 $m$ 才露出来（§9.2）。
#
# </details>
# ~~ en 4b7efef4
# # Chapter 8. In practice: reading traces, finding hangs, matching torch, fitting into 3D parallelism
#
# In the earlier chapters every schedule was laid out neatly by the simulator. A real training job gives you a measured trace instead, and you have to read off where time went idle, why, and where each rank stopped when the job hangs. This chapter runs plans on $p$ gloo processes ($p$ is set in the code of section 1) and splits the idle time of the trace into the schedule's own bubble, imbalance, and communication and overhead; then it looks at memory. Next it provokes a hang and shows how to locate it, maps the course's plans onto the actions of `torch.distributed.pipelining`, and places PP between TP and DP. It ends with a "PP clinic": the six questions practitioners ask most, each answered by a small reproduction you can run, with a check. The [glossary](../glossary.md) has every term.
#
# **In the browser (the browser edition):** this chapter's multi-process runs, the hunt for a hang and the comparison with torch.distributed.pipelining need torch and run only in the desktop edition (`make lab`); in the browser it stops at the first cell that needs torch.
#
# ## Self-test
#
# 1. In a measured timeline, which idle time is bubble and which is stage imbalance?
# 2. How can you estimate the point-to-point latency from a trace alone? How far can you trust that estimate on a laptop?
# 3. A multi-process pipeline hangs. What information do you need first?
# 4. How is the course plan's `B3` written as a torch action?
# 5. Why is the usual layout "TP inside a node, PP across nodes, DP outermost"?
# 6. You add up the micro-batches' losses instead of averaging them (no division by $m$). Why does training with Adam not show it?
#
# <details>
# <summary>Answers</summary>
#
# 1. Where the idle time sits does not tell you. In the ideal 1F1B, rank 0 has no idle time before its first op or after its last: its whole bubble lies between ops. The reliable method replays the same plan twice, once with every op's measured duration and once with every op at the mean duration of its kind. The second replay's idle time is the schedule's bubble; what the first adds is imbalance; what the measurement adds beyond the first is communication and overhead.
# 2. Do not subtract timestamps taken by two processes (their clocks are offset). Time a round trip on one rank: how long it waited from sending an activation to receiving the gradient, minus the time the next rank spent on that micro-batch (measured on that rank's own clock). Half of what is left is the one-way latency plus timer error. On one machine, gloo's real latency is tens of microseconds, less than the jitter of an emulated op, so on a laptop the estimate mostly measures timer error and is only an upper bound.
# 3. Where each rank is right now: which op, which message it waits for (or is sending). The watchdog's or timeout's report gives it, and so do each process's Python stack (py-spy dump, faulthandler). Then compare it with the plan's dependencies to find the cycle of ranks waiting on each other, or the rank that has already finished.
# 4. In a plan with W ops, `B` is the input gradient, which torch writes `I` (as in `2I3`: stage 2, micro-batch 3). In a plan without W, `B` is the full backward, and torch writes `B` too (`2B3`).
# 5. TP all-reduces in every layer: it moves the most data and is the most sensitive to bandwidth, so it stays inside a node on NVLink. PP sends one activation per micro-batch between neighbouring stages: little data, so it can cross nodes. DP all-reduces the gradients once per iteration and can overlap that with the backward, so it goes outermost.
# 6. The gradients come out $m$ times too large, and Adam's update does not change when every gradient is scaled by the same constant (its first moment and the square root of its second grow together). SGD's step, a gradient-clipping threshold and the logged loss all scale by $m$: the mistake shows once you change the optimizer or $m$ (§9.2).
#
# </details>

# %%
import importlib.util
import json
import os
import re
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from course import figure, plots
from course.attribution import attribute, window_idle
from course.chapter import md, open_chapter
from course.claims import claim, reveal, sweep
from course.costs import Costs
from course.live import DeadlockDetected, demos, launch, run_plan
from course.memory import (
    GB,
    PRESETS,
    ActivationConfig,
    chunk_times,
    embedding_activation_bytes,
    fit_layouts,
    layer_activation_bytes,
    output_activation_bytes,
    pipeline_memory,
    rank_params,
    static_bytes,
    step_traffic,
)
from course.plan import Plan, ops_of
from course.replay import durations_of, replay
from course.schedules import build
from course.sim import DeadlockError, simulate
from course.torch_bridge import compare, load_in_torch, to_actions, torch_order
from course.trace import write_trace
from course.widgets import explore

text = open_chapter("08_in_practice")


def space() -> str:
    """What this edition's language puts between two sentences: a space in English, nothing in Chinese."""
    return " " if text.lang == "en" else ""

# %% [markdown] run
# ~~ zh cbd5ecc4
# ## 1. 跑一次，拿到 trace
#
# `run_plan` 在 $p$ 个 gloo 进程上执行同一个 plan：真实的前向、反向（autograd），异步发送，所有参数梯度和单进程的参考结果逐一比较。`emulate=True` 把每个操作补齐到 `Costs` 规定的时长（1 个 cost unit = `unit_ms` 毫秒），这样一台普通电脑上测到的时间线，形状就和一个 GPU 集群上的一样，可以和模拟器逐格对照（本机的核数在下一格的输出里）。
# ~~ en aebf26f1
# ## 1. One run, one trace
#
# `run_plan` executes a plan on $p$ gloo processes: real forwards and backwards (autograd), asynchronous sends, and every parameter gradient compared with a single-process reference. `emulate=True` pads each op to the duration `Costs` gives it (1 cost unit = `unit_ms` milliseconds), so the timeline measured on an ordinary computer has the shape it would have on a GPU cluster and can be compared with the simulator step by step (the number of cores is in the next cell's output).

# %% [text] cpus
# ~~ zh 8d31dbd6
# {cpus} 个逻辑 CPU，跑 {p} 个 rank 进程
# ~~ en a2d3be61
# {cpus} logical CPUs for {p} rank processes

# %% [text] grad-ok
# ~~ zh 3723a11e
# 梯度检查：通过（最大绝对误差 {err:.1e}）。
# ~~ en ef5aba10
# Gradient check passed (largest absolute error {err:.1e}).

# %% [text] makespans
# ~~ zh 65ce5cc6
# 实测 makespan **{measured:.0f} ms**，模拟器预测 {simulated:.0f} ms，实测 / 模拟 = {ratio:.2f}。
# ~~ en 9971f1ff
# The measured makespan is **{measured:.0f} ms** against the simulator's {simulated:.0f} ms: measured / simulated = {ratio:.2f}.

# %% [text] ratio-above
# ~~ zh 88a1a2a8
# 多出来的 {extra:.0f} ms 是模拟器没有建模的部分（操作超出补时的长度、消息、进程调度）；第 2 节把它按原因拆开。
# ~~ en 8aa9c827
# The extra {extra:.0f} ms is what the simulator does not model (ops running past their padding, messages, process scheduling); section 2 splits it by cause.

# %% [text] ratio-below
# ~~ zh 6fb7486d
# 实测没有比模拟长：补时把每个操作补到了规定的时长，这次的开销都藏在补时里了。
# ~~ en 80a110a7
# The measurement is no longer than the simulation: padding brought every op up to its modelled duration, and this time all overhead hid inside the padding.

# %%
P, M, UNIT_MS = 4, 8, 20
plan = build("1f1b", P, M)
run = run_plan(plan, Costs(), emulate=True, unit_ms=UNIT_MS)
print(text("cpus", cpus=os.cpu_count(), p=P))
print(run)

fig, axes = figure.subplots(2, 1, figsize=(10, 4.2))
plots.gantt(run.timeline, ax=axes[0])
plots.gantt(run.simulated, ax=axes[1])
fig.tight_layout()
figure.show()
extra_ms = (run.measured_makespan - run.simulated_makespan) * 1e3
md(claim(run.grad_ok, text("grad-ok", err=run.max_abs_err), max_abs_err=run.max_abs_err)
   + space() + text("makespans", measured=run.measured_makespan * 1e3, simulated=run.simulated_makespan * 1e3, ratio=run.ratio)
   + space() + claim(run.ratio > 1, text("ratio-above", extra=extra_ms), otherwise=text("ratio-below")))

# %% [markdown] classify
# ~~ zh 5fe015ae
# ## 2. 把空闲分类
#
# 一个 rank 的空闲按位置分三段：第一个操作开始之前（head）、操作与操作之间（gaps）、最后一个操作结束之后（tail）。一个诱人的读法是"head 和 tail 是灌满与排空，也就是 bubble；gaps 是在等别人（不均衡或通信）"。先在没有任何开销的理想模拟上检验它。
# ~~ en 92f35d39
# ## 2. Sorting the idle time
#
# By position, a rank's idle time falls into three parts: before its first op starts (head), between ops (gaps), and after its last op ends (tail). A tempting reading is "head and tail are the fill and the drain, that is, the bubble; gaps are waiting on others (imbalance or communication)". Test it first on the ideal simulation, which has no overhead at all.

# %% [markdown] predict-rank0
# ~~ zh b0529103
# **预测：** 理想的 1F1B（本节的 $p$、$m$，默认代价），rank 0 的空闲里 head、gaps、tail 各是多少个 cost unit？写成 `[head, gaps, tail]`。
# ~~ en d7a74b1b
# **Predict:** in the ideal 1F1B (this section's $p$ and $m$, default costs), how many cost units of rank 0's idle time are head, gaps and tail? Write `[head, gaps, tail]`.

# %%
guess_rank0 = None      # [head, gaps, tail], e.g. [3, 0, 6]

# %% [text] windows-head
# ~~ zh b42275cb
# | rank | 忙碌（{unit}） | head | gaps | tail |
# |---|---|---|---|---|
# ~~ en d1bb1dd4
# | rank | busy ({unit}) | head | gaps | tail |
# |---|---|---|---|---|

# %% [text] unit-cost
# ~~ zh 895c683f
# 代价单位
# ~~ en f4dafcb9
# cost units

# %% [text] rank0-gaps
# ~~ zh 42e74bd6
# 理想的 1F1B 没有任何通信和不均衡，rank 0 却 head 和 tail 都是 0、gaps 是 {gaps:g}：它预热完要等第一个梯度回来，稳定阶段之后又要等一个个反向回流，bubble 全部夹在操作中间。四个 rank 合计空闲 {idle:g}，其中 {in_gaps:g} 在 gaps 里。所以"gaps = 不均衡或通信"对 1F1B 是错的：位置分不出原因。
# ~~ en 14da5682
# The ideal 1F1B has no communication and no imbalance, yet rank 0 has head and tail 0 and gaps {gaps:g}: after its warm-up it waits for the first gradient, and after the steady state it waits for the backwards to flow back one by one, so its whole bubble lies between ops. All four ranks idle {idle:g} units in total, {in_gaps:g} of them in gaps. So "gaps = imbalance or communication" is wrong for 1F1B: position does not tell the cause.

# %%
def show_windows(tl, unit=1e3, suffix="ms"):
    lines = [text("windows-head", unit=suffix)]
    for row in window_idle(tl):
        lines.append(f"| {row['rank']} | {row['busy'] * unit:.4g} | {row['head'] * unit:.4g} | "
                     f"{row['gaps'] * unit:.4g} | {row['tail'] * unit:.4g} |")
    md("\n".join(lines))


ideal = simulate(plan, Costs())
show_windows(ideal, unit=1, suffix=text("unit-cost"))
ideal_rows = window_idle(ideal)
r0 = [ideal_rows[0][k] for k in ("head", "gaps", "tail")]
ideal_gaps = sum(r["gaps"] for r in ideal_rows)
ideal_idle = sum(r["head"] + r["gaps"] + r["tail"] for r in ideal_rows)

# %% [text] rank0-swept
# ~~ zh 2265ec84
# 这不是这组数的巧合：$p$ 取 2..8、$m$ 取 1..24、F、B、W 各取 [0.5, 2] 的 {checked} 个采样点上，理想 1F1B 的 rank 0 都没有 head 和 tail。
# ~~ en 01ec7235
# This is no accident of these numbers: at {checked} sampled points with $p$ in 2..8, $m$ in 1..24 and F, B, W each in [0.5, 2], rank 0 of the ideal 1F1B has neither head nor tail.

# %%
def rank0_idles_between_ops(p, m, f, b, w):
    row = window_idle(simulate(build("1f1b", p, m), Costs(f=f, b=b, w=w)))[0]
    return abs(row["head"]) < 1e-9 and abs(row["tail"]) < 1e-9


swept_rank0 = sweep(rank0_idles_between_ops, {"p": (2, 8), "m": (1, 24), "f": (0.5, 2.0), "b": (0.5, 2.0),
                                              "w": (0.5, 2.0)}, 100, seed=8)
md(reveal(guess_rank0, r0, claim(r0[0] == 0 and r0[2] == 0 and r0[1] > 0,
                                 text("rank0-gaps", gaps=r0[1], idle=ideal_idle, in_gaps=ideal_gaps), rank0=r0)
          + space() + claim(swept_rank0.holds, text("rank0-swept", checked=swept_rank0.checked), **swept_rank0.figures())))

# %% [markdown] replay-method
# ~~ zh 5a1da0fd
# 正确的做法是**拿 trace 自己的数字再模拟一遍**（`course.attribution.attribute`）：
#
# 1. 用 trace 里量到的每个操作的时长、零延迟，把同一个 plan 重放一遍（`course.replay.replay`）。它的空闲是调度和实际时长逼出来的；实测比它多出来的，是**通信和开销**（消息在路上、进程调度、计时误差）。
# 2. 每个操作都取同类操作（F、B、W、F&B）的平均时长，再重放一遍：总工作量不变、但完全均衡。它的空闲是**调度本身的 bubble**；第 1 步比它多出来的是**不均衡**。
#
# 空闲按一次迭代的矩形算（makespan 减去忙碌时间，即 bubble 占比的分子），所以每个 rank 上三部分相加正好是实测的空闲。
# ~~ en 1e7bf5ca
# The right method is to **simulate again with the trace's own numbers** (`course.attribution.attribute`):
#
# 1. Replay the same plan with every op's measured duration and zero latency (`course.replay.replay`). Its idle time is what the schedule and the actual op lengths force; whatever the measurement idles beyond it is **communication and overhead** (messages in flight, process scheduling, timer error).
# 2. Replay it again with every op at the mean duration of its kind (F, B, W, F&B): the same total work, perfectly balanced. Its idle time is **the schedule's own bubble**; what step 1 adds to it is **imbalance**.
#
# Idle time is counted in the iteration's rectangle (makespan minus busy time, the numerator of the bubble fraction), so on every rank the three parts add up to exactly the measured idle time.

# %% [text] attribution-head
# ~~ zh 7b6952cc
# | rank | 空闲（{unit}） | 调度的 bubble | 不均衡 | 通信 / 开销 |
# |---|---|---|---|---|
# ~~ en edb6daad
# | rank | idle ({unit}) | schedule bubble | imbalance | comm / overhead |
# |---|---|---|---|---|

# %% [text] all-ranks
# ~~ zh e009c148
# 合计
# ~~ en 5ef5ef03
# all

# %% [text] balanced
# ~~ zh 95bfcc4f
# 实测 bubble 占比 {measured:.1%}，公式 $(p-1)/(m+p-1)$ 给出 {formula:.1%}。所有 rank 合计空闲 {idle:.0f} ms：调度本身 {schedule:.0f} ms（理想模拟是 {ideal:.0f} ms），不均衡 {imbalance:.0f} ms，通信和开销 {overhead:.0f} ms。
# ~~ en 487681ed
# The measured bubble fraction is {measured:.1%}; the formula $(p-1)/(m+p-1)$ gives {formula:.1%}. All ranks together idle {idle:.0f} ms: {schedule:.0f} ms from the schedule itself (the ideal simulation has {ideal:.0f} ms), {imbalance:.0f} ms of imbalance and {overhead:.0f} ms of communication and overhead.

# %% [text] balanced-schedule
# ~~ zh ab3c071d
# 这次运行里最大的一块是调度本身的 bubble，另外两类加起来占空闲的 {rest:.0%}：均衡的 plan 在补时下，剩下的是测量和开销。
# ~~ en f5559aa8
# In this run the largest part is the schedule's own bubble; the other two together are {rest:.0%} of the idle time: with a balanced plan and padded ops, what is left is measurement and overhead.

# %% [text] balanced-other
# ~~ zh f25715b9
# 这次运行里开销或不均衡比调度本身的 bubble 还大：进程在抢 CPU，操作超出了补时的长度（另外两类占空闲的 {rest:.0%}）。
# ~~ en 9385f0bf
# In this run overhead or imbalance is larger than the schedule's own bubble: processes compete for the CPU and ops run past their padding (the other two are {rest:.0%} of the idle time).

# %%
def show_attribution(plan, tl, unit=1e3, suffix="ms"):
    shares = attribute(plan, tl)
    lines = [text("attribution-head", unit=suffix)]
    for s in shares:
        assert abs(s.schedule + s.imbalance + s.overhead - s.idle) < 1e-9
        lines.append(f"| {s.rank} | {s.idle * unit:.0f} | {s.schedule * unit:.0f} | {s.imbalance * unit:.0f} | "
                     f"{s.overhead * unit:.0f} |")
    total = {k: sum(getattr(s, k) for s in shares) for k in ("idle", "schedule", "imbalance", "overhead")}
    lines.append(f"| {text('all-ranks')} | {total['idle'] * unit:.0f} | {total['schedule'] * unit:.0f} | "
                 f"{total['imbalance'] * unit:.0f} | {total['overhead'] * unit:.0f} |")
    md("\n".join(lines))
    return total


balanced_total = show_attribution(plan, run.timeline)
rest = (balanced_total["imbalance"] + balanced_total["overhead"]) / balanced_total["idle"]
md(text("balanced", measured=run.timeline.bubble_ratio, formula=(P - 1) / (M + P - 1),
        idle=balanced_total["idle"] * 1e3, schedule=balanced_total["schedule"] * 1e3,
        ideal=ideal_idle * UNIT_MS, imbalance=balanced_total["imbalance"] * 1e3,
        overhead=balanced_total["overhead"] * 1e3)
   + space() + claim(balanced_total["schedule"] >= max(balanced_total["imbalance"], balanced_total["overhead"]),
           text("balanced-schedule", rest=rest), otherwise=text("balanced-other", rest=rest)))

# %% [markdown] perfetto
# ~~ zh 2ee4b1a7
# 同一条 trace 也可以导出成 Chrome trace-event JSON（`course.trace.write_trace`），用 Perfetto（ui.perfetto.dev）或 `chrome://tracing` 打开：每个 rank 一条轨道，每个操作一个事件，外加一条激活的计数器轨道。
# ~~ en 62f22fce
# The same trace can be written as Chrome trace-event JSON (`course.trace.write_trace`) and opened in Perfetto (ui.perfetto.dev) or `chrome://tracing`: one track per rank, one event per op, plus a counter track of the activations.

# %% [text] trace-file
# ~~ zh deaa6698
# {path}：{events} 个操作事件，{p} 条 rank 轨道；第一个：{first}
# ~~ en 8b52ce90
# {path}: {events} op events on {p} rank tracks; the first: {first}

# %%
trace_path = write_trace(Path(tempfile.mkdtemp()) / "1f1b_measured.json", run.timeline)
events = json.loads(trace_path.read_text())["traceEvents"]
ops_in_trace = [e for e in events if e["ph"] == "X"]
assert len(ops_in_trace) == sum(len(s) for s in plan.ranks)
print(text("trace-file", path=trace_path, events=len(ops_in_trace), p=P, first=ops_in_trace[0]))

# %% [markdown] imbalance
# ~~ zh 26a803eb
# ## 3. 不均衡：一个 stage 比别人慢
#
# 让最后一个 stage 重一倍（比如它还要算 lm_head 和 loss），再跑一次：
# ~~ en 72f6d49e
# ## 3. Imbalance: one stage slower than the rest
#
# Make the last stage twice as heavy (it may also compute the lm_head and the loss, for instance) and run again:

# %%
heavy = [1.0, 1.0, 1.0, 2.0]
uneven_costs = Costs(f=heavy, b=heavy, w=heavy)   # full backward = b + w = 2 x forward
uneven = run_plan(plan, uneven_costs, emulate=True, unit_ms=UNIT_MS)
plots.gantt(uneven.timeline, title="1F1B measured, last stage 2x heavier")
figure.show()

# %% [markdown] predict-grows
# ~~ zh 972f1092
# **预测：** 和均衡的那次相比，这次所有 rank 合计的空闲里，哪一类（`"schedule"`、`"imbalance"`、`"overhead"`）涨得最多？
# ~~ en 1960284b
# **Predict:** compared with the balanced run, which part of the idle time of all ranks together (`"schedule"`, `"imbalance"` or `"overhead"`) grows the most?

# %%
guess_grows = None      # "schedule", "imbalance" or "overhead"

# %% [text] busiest
# ~~ zh 91b125ee
# rank {rank} 最忙：忙碌时间是平均值的 **{ratio:.2f}** 倍（最大值 / 平均值，均衡时接近 1）。三类空闲各涨了 {growth}。
# ~~ en 0a03833a
# Rank {rank} is the busiest: its busy time is **{ratio:.2f}** times the mean (max / mean, close to 1 when balanced). The three parts of the idle time grew by {growth}.

# %% [text] imbalance-grows
# ~~ zh bbe78555
# 涨的是不均衡：快的 rank 要等慢的 rank {rank}，rank {rank} 自己的不均衡一项是负的（{own:.0f} ms，它比均衡时更忙、空得更少）。办法是重新切分层（第 7 章）。
# ~~ en fe40d9f1
# Imbalance is what grew: the fast ranks wait for the slow rank {rank}, whose own imbalance is negative ({own:.0f} ms: it is busier than in the balanced run, so it idles less). The remedy is to cut the layers differently (chapter 7).

# %% [text] imbalance-not
# ~~ zh c38a6326
# 这次测量里涨得最多的不是不均衡：开销盖过了它，可以重跑一次。
# ~~ en 16e99589
# In this measurement imbalance is not what grew the most: overhead drowned it; run the cell again.

# %%
uneven_total = show_attribution(plan, uneven.timeline)
growth = {k: uneven_total[k] - balanced_total[k] for k in ("schedule", "imbalance", "overhead")}
busy = uneven.timeline.busy
imbalance = max(busy) / statistics.mean(busy)
slowest = busy.index(max(busy))
shares = attribute(plan, uneven.timeline)
grew = ", ".join(f"{k} {v * 1e3:+.0f} ms" for k, v in growth.items())
md(reveal(guess_grows, max(growth, key=growth.get),
          claim(uneven.grad_ok, text("grad-ok", err=uneven.max_abs_err), max_abs_err=uneven.max_abs_err)
          + space() + text("busiest", rank=slowest, ratio=imbalance, growth=grew)
          + space() + claim(max(growth, key=growth.get) == "imbalance" and shares[slowest].imbalance < 0,
                  text("imbalance-grows", rank=slowest, own=shares[slowest].imbalance * 1e3),
                  otherwise=text("imbalance-not"), growth=growth)))

# %% [markdown] latency
# ~~ zh 813b7c93
# ## 4. 通信：从 trace 里估延迟
#
# 最直接的想法是拿"上游结束"和"下游开始"两个时间戳相减。但它们来自两个进程的时钟：执行器只在离开同一个 barrier 时对齐时间原点，各进程离开 barrier 的时刻本身就差着零点几毫秒，相减常常得到负数。
#
# 可靠的办法是只用**同一个进程的时钟**量一次往返：rank $s$ 做完 $F_i$ 把激活发给 rank $s+1$，再等 $B_i$ 的梯度回来。在 rank $s$ 上量"从 $F_i$ 结束到 $B_i$ 开始"，在 rank $s+1$ 上量"从 $F_i$ 开始到 $B_i$ 结束"（它处理这个 micro-batch 用的时间）。只挑 rank $s$ 在 $B_i$ 之前正空着的那些 micro-batch（梯度一到就开始算），两者之差就是一去一回两次传输，再加上唤醒进程的延迟和计时误差。所以每个样本的一半是单程延迟的一个**上界**，而不是它本身。
#
# 下一格还量了两样东西，用来判断这个上界有多松：补时操作自身的抖动（每个操作实测比规定时长多出来多少），以及本机两个 gloo 进程之间真实的单程延迟（来回传 200 次一个小张量，取一半）。
# ~~ en 4cc6fda0
# ## 4. Communication: estimating the latency from a trace
#
# The obvious idea is to subtract "upstream op ended" from "downstream op started". But the two timestamps come from two processes' clocks: the executor aligns their time origins only as they leave a common barrier, and the processes leave it a few tenths of a millisecond apart, so the difference often comes out negative.
#
# The reliable way times a round trip on **one process's clock**: rank $s$ finishes $F_i$, sends the activation to rank $s+1$, and waits for $B_i$'s gradient to come back. On rank $s$ measure "from the end of $F_i$ to the start of $B_i$"; on rank $s+1$ measure "from the start of $F_i$ to the end of $B_i$" (the time it spent on this micro-batch). Take only the micro-batches for which rank $s$ sat idle before $B_i$ (it started as soon as the gradient arrived): the difference is two transfers, one each way, plus the delay of waking a process and timer error. So half of each sample is an **upper bound** on the one-way latency, not the latency itself.
#
# The next cell measures two more things to judge how loose that bound is: the jitter of the emulated ops (how much longer than its padded duration each op measured), and the real one-way latency between two gloo processes on this machine (half the round trip of a small tensor bounced 200 times).

# %% [text] latency-samples
# ~~ zh 4d0e90f4
# rank {s} 与 rank {s1} 之间有 {n} 次干净的往返，单程延迟的上界：中位数 **{median:.2f} ms**，最小 {low:.2f} ms，最大 {high:.2f} ms。
# ~~ en eb555cf5
# Rank {s} and rank {s1} have {n} clean round trips. Their bound on the one-way latency: median **{median:.2f} ms**, smallest {low:.2f} ms, largest {high:.2f} ms.

# %% [text] latency-negative
# ~~ zh c128cb42
# 其中 {negative} 个样本是负的：延迟比计时本身的误差还小。
# ~~ en ef96d046
# {negative} of the samples are negative: the latency is smaller than the timer's own error.

# %% [text] jitter
# ~~ zh 813b16d6
# 补时的操作比规定时长平均多出 {jitter:.2f} ms（{ops} 个操作的中位数）；本机两个 gloo 进程之间传一个 {size} 字节的张量，单程是 {wire:.3f} ms（200 次往返的中位数的一半）。
# ~~ en 2a11d759
# The emulated ops ran {jitter:.2f} ms past their padded duration (median of {ops} ops); between two gloo processes on this machine a {size}-byte tensor takes {wire:.3f} ms one way (half the median of 200 round trips).

# %% [text] wire-below
# ~~ zh 5298162b
# 真实的线路延迟只有一个操作抖动的 1/{ratio:.0f}：在这个分辨率下，上面的估计量到的主要是计时误差和进程唤醒，只能当上界读。
# ~~ en bf68baeb
# The real wire latency is 1/{ratio:.0f} of one op's jitter: at this resolution the estimate above mostly measures timer error and process wake-ups, and can only be read as an upper bound.

# %% [text] wire-above
# ~~ zh 7584cbb6
# 这次线路延迟不比一个操作的抖动小（机器很忙时 gloo 的往返也会变慢）：上面的估计同时含着两者，分不开。
# ~~ en c5ac4423
# This time the wire latency is not below one op's jitter (on a busy machine gloo's round trips slow down too): the estimate above holds both, and they cannot be told apart.

# %% [text] whatif
# ~~ zh 3508aed6
# 用实测的操作时长、零延迟重放这个 plan，makespan 是 {forced:.1f} ms，比实测少 {gap:.1f} ms；再加上估计的延迟（{latency:.3f} ms）重放，是 {what_if:.1f} ms。
# ~~ en ade8e9b5
# Replayed with the measured op lengths and no latency, the plan takes {forced:.1f} ms, {gap:.1f} ms less than measured; replayed again with the estimated latency ({latency:.3f} ms) it takes {what_if:.1f} ms.

# %% [text] whatif-within
# ~~ zh b0f33c31
# 两者在一个操作的抖动（{jitter:.2f} ms）之内一致：在这个分辨率下，样本里的延迟解释了剩下的全部差距。但它们量的是相互依赖的两个操作之间的等待（线路、唤醒、计时），不只是线路。
# ~~ en 7c897ee5
# The two agree within one op's jitter ({jitter:.2f} ms): at this resolution the samples' delay accounts for the whole remaining gap. But what they measure is the wait between two dependent ops (wire, wake-up, timer), not the wire alone.

# %% [text] whatif-part
# ~~ zh 8b0ec8c9
# 估计的延迟解释了这 {gap:.1f} ms 里的 {share:.0%}；剩下的是样本看不到的开销（进程调度、由于别的原因晚开始的操作）。
# ~~ en 3102909e
# The estimated latency accounts for {share:.0%} of those {gap:.1f} ms; the rest is overhead the samples do not see (process scheduling, ops that start late for other reasons).

# %% [text] whatif-over
# ~~ zh d30015a0
# 估计偏大：带着它重放比实测还长 {over:.1f} ms。样本里含着排队和计时误差，所以它只是延迟的上界。
# ~~ en 67c666ad
# The estimate is too large: replayed with it, the plan runs {over:.1f} ms longer than the measurement. Its samples carry queueing and timer error, so it only bounds the latency from above.

# %% [markdown] cluster-latency
# ~~ zh c153bcae
# 在 GPU 集群上，跨节点的一跳通常是几十微秒到毫秒级，而且随激活的大小增长，比本机 gloo 的线路延迟大得多，也比 GPU 上操作时长的抖动大，同样的读法就能看出它是不是瓶颈；那时该做的是把发送和计算重叠起来，或者减少跨节点的 stage 边界。
# ~~ en acf4830a
# On a GPU cluster a cross-node hop typically costs tens of microseconds to milliseconds and grows with the activation: far more than gloo's wire latency on one machine, and more than the jitter of GPU op durations, so the same reading shows whether it is a bottleneck. The remedies then are to overlap sends with compute, or to have fewer stage boundaries cross nodes.

# %%
SIZE = 64        # float64 elements: one activation of the live model (4 rows x 16); live processes in this cell
wire_halves = launch(demos.ping_pong, 2, args=(200, SIZE), echo=False)[0]

# %%
def one_way_estimates(tl, s):
    """Per micro-batch whose B_i found rank s idle: half of (rank s: F_i end -> B_i start) minus (rank s+1: F_i start
    -> B_i end), each on its own rank's clock: the one-way latency plus wake-up delay and timer error."""
    def find(rank, kind, i):
        spans = tl.spans[rank]
        k = next(k for k, sp in enumerate(spans) if any(op.kind == kind and op.mb == i for op in ops_of(sp.step)))
        return k, spans[k]

    out = []
    for i in range(M):
        _, f = find(s, "F", i)
        k, b = find(s, "B", i)
        if tl.spans[s][k - 1].end >= b.start:   # rank s was busy until B_i started: no clean sample
            continue
        held = find(s + 1, "B", i)[1].end - find(s + 1, "F", i)[1].start
        out.append((b.start - f.end - held) / 2)
    return out


one_way = one_way_estimates(run.timeline, P - 2)
latency = max(statistics.median(one_way), 0.0)
negative = sum(1 for x in one_way if x < 0)
padded = Costs().durations(plan)           # cost units; each op was padded to this many x UNIT_MS
overshoot = [(e - s) - d * UNIT_MS / 1e3 for r in range(P)
             for s, e, d in zip(run.timeline.starts[r], run.timeline.ends[r], padded[r])]
jitter = statistics.median(overshoot)
wire = statistics.median(wire_halves)
measured_durations = durations_of(run.timeline)
forced = replay(plan, measured_durations).makespan
what_if = replay(plan, measured_durations, comm=latency).makespan
gap = run.timeline.makespan - forced
ms = 1e3
md(text("latency-samples", s=P - 2, s1=P - 1, n=len(one_way), median=statistics.median(one_way) * ms,
        low=min(one_way) * ms, high=max(one_way) * ms)
   + space() + claim(negative == 0, "", otherwise=text("latency-negative", negative=negative))
   + space() + text("jitter", jitter=jitter * ms, ops=len(overshoot), size=SIZE * 8, wire=wire * ms)
   + space() + claim(wire < jitter, text("wire-below", ratio=jitter / wire), otherwise=text("wire-above")))
if abs(what_if - run.timeline.makespan) <= jitter:
    verdict = text("whatif-within", jitter=jitter * ms)
elif what_if < run.timeline.makespan:
    verdict = text("whatif-part", gap=gap * ms, share=(what_if - forced) / gap)
else:
    verdict = text("whatif-over", over=(what_if - run.timeline.makespan) * ms)
md(text("whatif", forced=forced * ms, gap=gap * ms, latency=latency * ms, what_if=what_if * ms) + space() + verdict)

# %% [markdown] memory
# ~~ zh 9bdec875
# ## 5. 显存：谁存得最多
#
# 执行器按 plan 的顺序分配、释放激活：F 开始时多一份，这个 micro-batch 的反向做完时少一份。同一个模型换成 GPipe 再跑一次，对比两条实测曲线。
# ~~ en 2eab1f06
# ## 5. Memory: who holds the most
#
# The executor allocates and frees activations in the plan's order: one more when an F starts, one less when that micro-batch's backward is done. Run the same model with GPipe and compare the two measured curves.

# %% [markdown] predict-gpipe-peak
# ~~ zh 9f2ce087
# **预测：** GPipe 的激活峰值出现在哪个 rank 上？写 rank 编号，或者 `"all"`（每个 rank 一样高）。
# ~~ en 10a7e0a0
# **Predict:** on which rank does GPipe reach its activation peak? Write a rank number, or `"all"` (every rank as high).

# %%
guess_gpipe_peak = None     # a rank number or "all"

# %% [text] peaks
# ~~ zh 73bea0f7
# GPipe 每个 rank 的峰值 {gpipe}，1F1B 是 {one_f_one_b}，ZB-H1（模拟）是 {zb}；两次实测的 makespan 分别是 {gpipe_ms:.0f} ms 和 {one_f_one_b_ms:.0f} ms。
# ~~ en 3cd24d35
# GPipe's peak per rank is {gpipe}, 1F1B's {one_f_one_b}, and ZB-H1's (simulated) {zb}; the two measured makespans are {gpipe_ms:.0f} ms and {one_f_one_b_ms:.0f} ms.

# %% [text] peak-depends
# ~~ zh 2b7168c0
# 只有 1F1B 的峰值集中在 rank 0；GPipe 和 ZB-H1 每个 rank 一样高。在 $p$ 取 2..8、$m$ 取 $p..3p$、F、B、W 各取 [0.5, 2] 的 {checked} 个采样点上都是这样（$m < p$ 时 1F1B 的前几个 rank 一样高，见 §9.1）。所以"OOM 总是先发生在 rank 0"并不成立，要看调度。真实的大模型里还有另一头：最后一个 stage 要存 fp32 的 logits（$b \times s \times V$，词表 $V$ 上十万）和 loss 的中间结果，常常是它先 OOM（Llama 3 的报告把首尾两头的不均衡都点了名；§9.4 按字节算一遍）。在 GPU 上，真实的字节数用 `torch.cuda.max_memory_allocated()` 按 rank 量。
# ~~ en 8a584372
# Only 1F1B concentrates its peak on rank 0; GPipe and ZB-H1 are as high on every rank. This holds at {checked} sampled points with $p$ in 2..8, $m$ in $p..3p$ and F, B, W each in [0.5, 2] (with $m < p$ the first ranks of 1F1B are equally high, see §9.1). So "OOM always strikes rank 0 first" is not true: it depends on the schedule. Real large models have the other end too: the last stage keeps the fp32 logits ($b \times s \times V$, with a vocabulary $V$ in the hundreds of thousands) and the loss's intermediates, and often runs out first (the Llama 3 report names the imbalance at both ends; §9.4 counts it in bytes). On a GPU, measure the real bytes per rank with `torch.cuda.max_memory_allocated()`.

# %%
gpipe_run = run_plan(build("gpipe", P, M), Costs(), emulate=True, unit_ms=UNIT_MS)
fig, axes = figure.subplots(1, 2, figsize=(11, 3))
plots.memory(gpipe_run.timeline, ax=axes[0])
plots.memory(run.timeline, ax=axes[1])
fig.tight_layout()
figure.show()


def peak_ranks(tl):
    top = max(tl.peak_activations)
    return [r for r, x in enumerate(tl.peak_activations) if abs(x - top) < 1e-9]


def peaks_follow_the_schedule(p, k, f, b, w):
    """GPipe and ZB-H1 equally high on every rank, 1F1B highest on rank 0 alone (m = k p >= p)."""
    costs = Costs(f=f, b=b, w=w)
    gpipe, zb, ofob = (simulate(build(name, p, k * p), costs).peak_activations for name in ("gpipe", "zb-h1", "1f1b"))
    return len(set(gpipe)) == 1 and len(set(zb)) == 1 and ofob[0] > max(ofob[1:])


swept_peaks = sweep(peaks_follow_the_schedule, {"p": (2, 8), "k": (1, 3), "f": (0.5, 2.0), "b": (0.5, 2.0),
                                                "w": (0.5, 2.0)}, 60, seed=8)
zb_peaks = simulate(build("zb-h1", P, M), Costs()).peak_activations
gpipe_top = peak_ranks(gpipe_run.timeline)
md(reveal(guess_gpipe_peak, "all" if len(gpipe_top) == P else gpipe_top[0],
          text("peaks", gpipe=gpipe_run.timeline.peak_activations, one_f_one_b=run.timeline.peak_activations,
               zb=zb_peaks, gpipe_ms=gpipe_run.measured_makespan * 1e3, one_f_one_b_ms=run.measured_makespan * 1e3)
          + space() + claim(len(gpipe_top) == P and peak_ranks(run.timeline) == [0] and len(set(zb_peaks)) == 1
                  and swept_peaks.holds, text("peak-depends", checked=swept_peaks.checked),
                  gpipe=gpipe_run.timeline.peak_activations, one_f_one_b=run.timeline.peak_activations, zb=zb_peaks,
                  **swept_peaks.figures())))

# %% [markdown] hang
# ~~ zh 6fbc8d70
# ## 6. 一个 hang，以及怎样找到它
#
# 第 3 章讲过：朴素的阻塞写法（操作开始时 recv、结束时阻塞 send）会让 1F1B 死锁；奇偶错序或批量收发（`batch_isend_irecv`）的阻塞写法则不会。把执行器换成朴素的阻塞 `send`，跑同一个 plan。启动器的看门狗发现所有没做完的 rank 都停在通信里、好几秒没有进展，就结束整个作业，并报告每个 rank 停在哪：
# ~~ en 4782135e
# ## 6. A hang, and how to find it
#
# Chapter 3 showed that the naive blocking version (recv when an op starts, a blocking send when it ends) deadlocks 1F1B, while blocking versions with parity ordering or batched send/recv (`batch_isend_irecv`) do not. Switch the executor to naive blocking `send`s and run the same plan. The launcher's watchdog sees every unfinished rank sitting in communication with no progress for a few seconds, ends the whole job, and reports where each rank is stuck:

# %%
try:
    run_plan(plan, blocking_send=True, stall=2.0, timeout=60)
    hang = None
except DeadlockDetected as err:
    hang = err
    print(err)
assert hang is not None, "naive blocking sends were expected to deadlock 1F1B"

# %% [text] cycle
# ~~ zh f3df66ac
# rank {a} 在发 {what_a}（给 {for_a}）给 rank {b}，rank {b} 却在发 {what_b}（给 {for_b}）给 rank {a}
# ~~ en 2076a04d
# rank {a} is sending the {what_a} for {for_a} to rank {b} while rank {b} is sending the {what_b} for {for_b} to rank {a}

# %% [text] sep
# ~~ zh b0d3c9cf
# ；
# ~~ en 41b805ea
# ;

# %% [text] hang-read
# ~~ zh 796937e6
# {n} 个 rank 里有 **{senders}** 个停在 `send` 上，看门狗在 {elapsed:.1f} s 时判定死锁。
# ~~ en 141f9114
# **{senders}** of the {n} ranks sit in `send`; the watchdog declared the deadlock after {elapsed:.1f} s.

# %% [text] hang-cycle
# ~~ zh 0bacc4db
# 读法：{reading}。阻塞的 send 要等对方调用 recv 才返回，两边都在发、都没在收，形成一个环；其余 rank 堵在发给别的 rank 的 send 上，等的正是环里的人。
# ~~ en 947b1aed
# How to read it: {reading}. A blocking send returns only once the peer calls recv; both sides are sending and neither is receiving, which closes a cycle. The other ranks are stuck in sends to other ranks, waiting for exactly the ranks in the cycle.

# %% [text] hang-no-cycle
# ~~ zh f2605a2e
# 这次报告里没有两个 rank 互相发送的环，逐个看每个 rank 在等谁。
# ~~ en 8323b2bd
# This report has no pair of ranks sending to each other; follow each rank to the one it waits for.

# %%
states = hang.states
sending = {}   # rank -> (what, for which op, to whom), read from the watchdog's report
for r, s in states.items():
    found = re.search(r"blocked in send of the (\w+) for (\S+) to rank (\d+)", s)
    if found:
        sending[r] = (found.group(1), found.group(2), int(found.group(3)))
cycles = sorted({tuple(sorted((a, b))) for a, (_, _, b) in sending.items() if sending.get(b, (0, 0, -1))[2] == a})
reading = text("sep").join(text("cycle", a=a, what_a=sending[a][0], for_a=sending[a][1], b=b, what_b=sending[b][0],
                                for_b=sending[b][1]) for a, b in cycles)
md(text("hang-read", n=len(states), senders=len(sending), elapsed=hang.elapsed)
   + space() + claim(bool(cycles), text("hang-cycle", reading=reading), otherwise=text("hang-no-cycle")))

# %% [markdown] hang-steps
# ~~ zh 304f4389
# 找 hang 的一般步骤：
#
# 1. **让它报出来，而不是一直挂着**：设置超时（`init_process_group(timeout=...)`、NCCL 的 watchdog），或者像这里一样用看门狗。
# 2. **拿到每个 rank 的位置**：它在执行 plan 的第几步、在等（发）哪条消息；各进程的 Python 栈（`py-spy dump --pid`、`faulthandler.dump_traceback_later`）。上面的报告里也带了每个 rank 的栈：`hang.stacks[rank]`。在 GPU 上用 NCCL 时，对应的工具是 NCCL 的 Flight Recorder（设 `TORCH_NCCL_TRACE_BUFFER_SIZE`，超时时每个 rank 导出最近的集合通信和点对点操作）、`NCCL_DEBUG=INFO` 和 `TORCH_NCCL_ASYNC_ERROR_HANDLING`（超时后让进程报错退出，而不是一直挂着）。
# 3. **对着 plan 找环**：谁在等谁。如果环是 plan 自己的（顺序排错了），在启动进程之前模拟器就能发现：`run_plan` 先模拟，一个会死锁的 plan 根本不会启动进程。§9.5 是另一种常见的 hang：没有环，而是有一个 rank 已经做完了。
# ~~ en 8b7b0926
# Finding a hang, in general:
#
# 1. **Make it report instead of hanging forever**: set a timeout (`init_process_group(timeout=...)`, NCCL's watchdog) or use a watchdog as here.
# 2. **Get every rank's position**: which step of the plan it is at, which message it waits for (or is sending); each process's Python stack (`py-spy dump --pid`, `faulthandler.dump_traceback_later`). The report above carries every rank's stack too: `hang.stacks[rank]`. On GPUs with NCCL, the tools for this are NCCL's Flight Recorder (set `TORCH_NCCL_TRACE_BUFFER_SIZE`, and on a timeout every rank dumps its recent collectives and point-to-point ops), `NCCL_DEBUG=INFO`, and `TORCH_NCCL_ASYNC_ERROR_HANDLING` (a timeout makes the process fail instead of hanging on).
# 3. **Find the cycle against the plan**: who waits for whom. When the cycle is the plan's own (a wrong order), the simulator finds it before any process starts: `run_plan` simulates first, and a plan that would deadlock never starts a process. §9.5 shows another common hang: no cycle, but one rank that has already finished.

# %% [text] refused
# ~~ zh 60560d25
# 没有启动任何进程就拒绝了：{err}
# ~~ en 30e1c95d
# refused before starting any process: {err}

# %%
stuck = Plan.parse("F0 B0 F1 B1\nF1 B1 F0 B0")
try:
    run_plan(stuck, emulate=True)
except DeadlockError as err:
    print(text("refused", err=err))

# %% [markdown] torch
# ~~ zh 968ae6ad
# ## 7. 对上 torch.distributed.pipelining
#
# torch 也把调度写成每个 rank 一串 action，打印形如 `2F0`：stage 2、前向、micro-batch 0。对应关系：
#
# | 课程的 plan | torch 的 action |
# |---|---|
# | `F3`（stage s） | `sF3` |
# | `B3`，plan 里没有 W：完整反向 | `sB3` |
# | `B3`，plan 里有 W：输入梯度 | `sI3` |
# | `W3` | `sW3` |
# | `F3&B1`（重叠的一对） | 一个组合 action `(sF3;tB1)OVERLAP_F_B` |
#
# stage 编号取的是这个 stage 在 micro-batch 路线上的位置（交错调度里 rank 0 持有 stage 0 和 $p$，依此类推）。`course.torch_bridge.to_actions` 做这个转换；重叠的一对写成 torch 的 `_load_csv` 读得懂的组合 action。这张表只管计算：收发动作由 torch 自己补上。练习 `torch-actions` 要你把收发也写出来。
# ~~ en 6bc8dcfc
# ## 7. Matching torch.distributed.pipelining
#
# torch also writes a schedule as one list of actions per rank, printed like `2F0`: stage 2, forward, micro-batch 0. The correspondence:
#
# | course plan | torch action |
# |---|---|
# | `F3` (stage s) | `sF3` |
# | `B3`, plan without W: full backward | `sB3` |
# | `B3`, plan with W: input gradient | `sI3` |
# | `W3` | `sW3` |
# | `F3&B1` (an overlapped pair) | one combined action `(sF3;tB1)OVERLAP_F_B` |
#
# The stage number is the stage's position along the micro-batch's route (in an interleaved schedule rank 0 holds stages 0 and $p$, and so on). `course.torch_bridge.to_actions` does this conversion and writes an overlapped pair as a combined action torch's `_load_csv` can read. The table covers computation only: torch adds the sends and receives itself. The exercise `torch-actions` asks you to write those too.

# %% [text] csv-loaded
# ~~ zh 8a0d423d
# `load_in_torch` 把 plan 写成 torch 的 CSV，交给 `{cls}._load_csv`：torch 接受了它，并且自己补上了收发动作（`_load_csv` 是私有接口，换 torch 版本时可能变）。
# ~~ en 92b0374b
# `load_in_torch` writes the plan as torch's CSV and hands it to `{cls}._load_csv`: torch accepted it and added the send and receive actions itself (`_load_csv` is a private interface and may change between torch versions).

# %%
for name in ("1f1b", "zb-h1"):
    print(name)
    for r, actions in enumerate(to_actions(build(name, 4, 4))):
        print(f"  rank {r}: {' '.join(actions)}")
runtime = load_in_torch(build("zb-h1", 4, 8))
md(text("csv-loaded", cls=type(runtime).__name__))

# %% [markdown] torch-compare
# ~~ zh 8316452c
# 反过来，把 torch 内置的调度类转成 plan，和课程自己的调度比一比（$p=4$、$m=8$）：
# ~~ en bbac93b2
# The other way round: turn torch's built-in schedule classes into plans and compare them with the course's own schedules ($p=4$, $m=8$):

# %% [text] compare-head
# ~~ zh fae4bb56
# | torch 的类 | 课程的调度 | 操作相同 | makespan torch / 课程 | 峰值 torch / 课程 |
# |---|---|---|---|---|
# ~~ en e7fc86f0
# | torch class | course schedule | same ops | makespan torch / course | peak torch / course |
# |---|---|---|---|---|

# %% [text] compare-rejected
# ~~ zh 45a55ac8
# 顺序被拒绝：{error}
# ~~ en b7ae39c4
# order rejected: {error}

# %% [text] same-ops
# ~~ zh bc339a92
# {n} 个调度类里，{same} 个和课程的调度逐个操作相同。
# ~~ en 0f997b24
# {same} of the {n} schedule classes match the course's schedules op for op.

# %% [text] none-rejected
# ~~ zh bf9a8ae4
# 没有被 `validate()` 拒绝的。
# ~~ en c5f96aba
# None is rejected by `validate()`.

# %% [text] some-rejected
# ~~ zh f4cd8103
# 被拒绝的有 {names}：它们打印出来的 `pipeline_order` 通不过 `validate()`。
# ~~ en 43f9aed9
# Rejected: {names}; the `pipeline_order` they print does not pass `validate()`.

# %%
table = compare(4, 8)
lines = [text("compare-head")]
for row in table:
    if "error" in row:
        lines.append(f"| {row['torch']} | {row['ours']} | {text('compare-rejected', error=row['error'])} | | |")
    else:
        lines.append(f"| {row['torch']} | {row['ours']} | {row['same_ops']} | {row['torch_makespan']:g} / "
                     f"{row['ours_makespan']:g} | {row['torch_peak']:g} / {row['ours_peak']:g} |")
md("\n".join(lines))
rejected = [row for row in table if "error" in row]
same = sum(1 for row in table if row.get("same_ops"))
md(text("same-ops", n=len(table), same=same)
   + space() + claim(not rejected, text("none-rejected"),
           otherwise=text("some-rejected", names=", ".join(row["torch"] for row in rejected))))

# %% [text] torch-printed
# ~~ zh b5810480
# 拿 Schedule1F1B 看：torch 打印的最后一个 rank 是 `{printed}`。而让 torch 的运行时真正执行同一个调度、记下的顺序是 `{ran}`，
# ~~ en 1a9c978f
# Take Schedule1F1B: torch prints its last rank as `{printed}`. Yet when torch's runtime actually executes the same schedule, the order recorded is `{ran}`.

# %% [text] torch-grad-ok
# ~~ zh 3104be7a
# 梯度检查通过。
# ~~ en ba816c51
# The gradient check passes.

# %% [text] off-by-one
# ~~ zh 87301570
# 打印出来的顺序错了一位：它出现了 micro-batch {m}，而 $m={m}$ 个 micro-batch 的编号只到 {last}。这是 torch 打印调度表（`pipeline_order`）的一个显示 bug，执行走的是另一段代码，所以跑出来是对的；值得向上游报告。拿框架打印的调度表做对照之前，先让模拟器 validate 一遍，再看实测 trace。
# ~~ en 2892fb7e
# The printed order is off by one: it names micro-batch {m}, while $m={m}$ micro-batches are numbered up to {last}. This is a display bug in how torch prints its schedule table (`pipeline_order`); execution takes another code path, so the run is right. It is worth reporting upstream. Before comparing with a schedule table a framework prints, have the simulator validate it, then look at the measured trace.

# %% [text] printed-differs
# ~~ zh d15d9bb2
# 打印出来的调度表和实际执行的顺序不一致；拿框架的调度表做对照之前，先让模拟器 validate 一遍，再看实测 trace。
# ~~ en da26c561
# The printed schedule table and the order actually executed disagree. Before comparing with a framework's schedule table, have the simulator validate it, then look at the measured trace.

# %%
printed_off_by_one = False      # what this torch prints for Schedule1F1B; the summary says only what was seen here
if any(row["torch"] == "Schedule1F1B" for row in rejected):
    order = torch_order("Schedule1F1B", P, M)
    last = " ".join(str(a) for a in order[P - 1])
    printed_mbs = [int(m_) for m_ in re.findall(r"[FBIW](\d+)", last)]
    torch_run = run_plan(plan, engine="torch")
    printed_off_by_one = max(printed_mbs) == M
    md(text("torch-printed", printed=last, ran=" ".join(torch_run.timeline.ops(P - 1)))
       + space() + claim(torch_run.grad_ok, text("torch-grad-ok"), max_abs_err=torch_run.max_abs_err)
       + space() + claim(printed_off_by_one, text("off-by-one", m=M, last=M - 1), otherwise=text("printed-differs"),
               printed=printed_mbs))

# %% [markdown] three-d
# ~~ zh 03fdbdfe
# ## 8. PP 在 TP 和 DP 之间
#
# 大模型训练把 GPU 排成三维：$N = d \times p \times t$（数据并行 × 流水线 × 张量并行）。每一维的通信模式不同：
#
# - **TP**（张量并行）：每层把矩阵切开，每个 micro-batch 每层 4 次 all-reduce（前向 2 次、反向 2 次），每次 $b\,s\,h$ 个元素。量最大、每层都要等，所以放在节点内（NVLink）。
# - **PP**：每个 micro-batch 在 stage 边界传一次激活、回传一次梯度，各 $b\,s\,h$ 个元素。开了 TP 时，一个 TP 组里的 $t$ 个 GPU 不必各发一整份：Megatron 的 scatter/gather 优化（或者序列并行下本来就切开的激活）让每个 GPU 只发 $1/t$，到对面再拼起来。量小，能跨节点；代价是 bubble。
# - **DP**：每次迭代对本 GPU 的参数梯度做一次 all-reduce，能和反向重叠，放在最外层。
#
# 还有一条把三者绑在一起的约束：全局 batch $G = d \cdot m \cdot b$。$d$ 越大，每个流水线分到的 micro-batch 数 $m$ 就越少，bubble 越大。这就是第 1 章说 $m$ 有上限的另一半原因。下面拿 Llama 3 8B 的形状（32 层、$h = 4096$）、序列长 4096、64 个 GPU 算一算。字节数由 `course.memory.step_traffic` 按上面的规则数出来（bf16 通信，ring all-reduce 让每个 GPU 发出 $2(n-1)/n$ 份），训练状态按混合精度 Adam 每个参数 16 字节：
# ~~ en 0e22070a
# ## 8. PP between TP and DP
#
# Training a large model arranges the GPUs in three dimensions: $N = d \times p \times t$ (data parallel × pipeline × tensor parallel). Each dimension communicates differently:
#
# - **TP** (tensor parallelism) splits every layer's matrices: 4 all-reduces per layer and micro-batch (2 in the forward, 2 in the backward), each of $b\,s\,h$ elements. It moves the most data and every layer waits for it, so it stays inside a node (NVLink).
# - **PP** sends one activation forward and one gradient back per micro-batch at each stage boundary, $b\,s\,h$ elements each. With TP on, the $t$ GPUs of a TP group need not each send a full copy: Megatron's scatter/gather optimisation (or the activations sequence parallelism has already split) lets each GPU send $1/t$, reassembled on the other side. Little data, so it can cross nodes; its price is the bubble.
# - **DP** all-reduces the GPU's parameter gradients once per iteration, can overlap that with the backward, and goes outermost.
#
# One constraint ties the three together: the global batch $G = d \cdot m \cdot b$. The larger $d$, the fewer micro-batches $m$ each pipeline gets, and the larger the bubble: the other half of why chapter 1 says $m$ has a ceiling. Here are the numbers for the shape of Llama 3 8B (32 layers, $h = 4096$), sequences of 4096 tokens and 64 GPUs. `course.memory.step_traffic` counts the bytes by the rules above (bf16 on the wire; a ring all-reduce makes each GPU send $2(n-1)/n$ of the tensor), and the training state is mixed-precision Adam's 16 bytes per parameter:

# %% [text] layouts-head
# ~~ zh f5d3a749
# | t × p × d | m | TP GB | PP GB | DP GB | bubble | 训练状态 GB/GPU |
# |---|---|---|---|---|---|---|
# ~~ en 02456ff0
# | t × p × d | m | TP GB | PP GB | DP GB | bubble | state GB/GPU |
# |---|---|---|---|---|---|---|

# %% [text] layouts-intro
# ~~ zh 0026bac6
# 每个 GPU 每次迭代发送的数据量（全局 batch 256 条序列，micro-batch 1 条；每一列取发得最多的那个 rank）：
# ~~ en 379f10d6
# What each GPU sends per iteration (a global batch of 256 sequences, one sequence per micro-batch; each column takes the rank that sends the most):

# %%
LLAMA8 = PRESETS["llama3-8b"]
SEQ, WORLD = 4096, 64
GPU_GB = 80           # one GPU's memory, for scale


def layout(tp: int, pp: int, global_batch: int, micro: int) -> dict:
    """Per-GPU traffic per iteration (GB, the busiest rank), bubble and training state of one (d, p, t) layout."""
    if WORLD % (tp * pp):
        raise ValueError(f"tp x pp = {tp * pp} does not divide {WORLD} GPUs")
    dp = WORLD // (tp * pp)
    if global_batch % (dp * micro):
        raise ValueError(f"global batch {global_batch} is not a multiple of dp x micro = {dp * micro}")
    if LLAMA8.layers % pp:
        raise ValueError(f"{LLAMA8.layers} layers do not split into {pp} equal stages")
    m = global_batch // (dp * micro)
    cfg = ActivationConfig(seq=SEQ, mbs=micro, tp=tp, sp=tp > 1)
    one_f_one_b = build("1f1b", pp, m)
    traffic = step_traffic(one_f_one_b, LLAMA8, cfg, dp)
    state = max(sum(static_bytes(n)) for n in rank_params(one_f_one_b, LLAMA8, tp))
    return {"dp": dp, "m": m, **{k.upper(): max(t[k] for t in traffic) / GB for k in ("tp", "pp", "dp")},
            "bubble": (pp - 1) / (m + pp - 1), "state_GB": state / GB}


rows = [text("layouts-head")]
for tp, pp in ((8, 1), (8, 4), (4, 4), (1, 8)):
    x = layout(tp, pp, global_batch=256, micro=1)
    rows.append(f"| {tp} × {pp} × {x['dp']} | {x['m']} | {x['TP']:.1f} | {x['PP']:.2f} | {x['DP']:.1f} | "
                f"{x['bubble']:.1%} | {x['state_GB']:.1f} |")
md(text("layouts-intro") + "\n\n" + "\n".join(rows))
T_EX, P_EX = 8, 4
base = layout(T_EX, P_EX, 256, 1)

# %% [markdown] predict-tp-pp
# ~~ zh 937adca3
# **预测：** 以 t=8、p=4 为例，TP 每个 GPU 每次迭代发送的数据量大约是 PP 的多少倍？
# ~~ en b28bfd18
# **Predict:** for t=8 and p=4, roughly how many times as much data does each GPU send per iteration for TP as for PP?

# %%
guess_tp_over_pp = None     # a ratio, e.g. 10

# %% [text] tp-vs-pp
# ~~ zh 16a7a6d9
# TP 每个 GPU 每次迭代要发 **{tp:.0f} GB**，PP 只有 **{pp:.2f} GB**（scatter/gather 之后；不做这个优化是 {pp_full:.1f} GB），DP 是 {dp:.1f} GB。
# ~~ en 27f55951
# For TP each GPU sends **{tp:.0f} GB** per iteration, for PP only **{pp:.2f} GB** (after scatter/gather; without it, {pp_full:.1f} GB), and for DP {dp:.1f} GB.

# %% [text] tp-critical
# ~~ zh c2ae519c
# TP 的量是 PP 的 {ratio:.0f} 倍，而且每层都挡在关键路径上，只能走节点内的高速互联；PP 的少量点对点传输可以放心跨节点，代价是 {bubble:.1%} 的 bubble。
# ~~ en 85e3d02c
# TP moves {ratio:.0f} times as much as PP, and it sits on the critical path in every layer, so it needs the fast links inside a node; PP's few point-to-point transfers can cross nodes safely, at the price of a {bubble:.1%} bubble.

# %% [text] state-no-pp
# ~~ zh 6440ed6c
# 不开 PP（t={t}、p=1）时每个 GPU 的训练状态是 {no_pp:.1f} GB，是 t={t}、p={p} 的 {times:.1f} 倍：模型再大几倍，一个 TP 组就装不下了，这时才需要 PP 按深度再切一刀。
# ~~ en 18b10a39
# Without PP (t={t}, p=1) each GPU holds {no_pp:.1f} GB of training state, {times:.1f} times as much as with t={t}, p={p}: a model a few times larger no longer fits in one TP group, and that is when PP has to cut it by depth as well.

# %%
ratio_tp_pp = base["TP"] / base["PP"]
no_pp = layout(T_EX, 1, 256, 1)
md(reveal(guess_tp_over_pp, round(ratio_tp_pp),
          text("tp-vs-pp", tp=base["TP"], pp=base["PP"], pp_full=base["PP"] * T_EX, dp=base["DP"])
          + space() + claim(ratio_tp_pp > 100 and base["TP"] > base["DP"],
                  text("tp-critical", ratio=ratio_tp_pp, bubble=base["bubble"]),
                  tp=base["TP"], pp=base["PP"], dp=base["DP"]), rel_tol=0.25))
md(claim(no_pp["state_GB"] > 2 * base["state_GB"],
         text("state-no-pp", t=T_EX, p=P_EX, no_pp=no_pp["state_GB"], times=no_pp["state_GB"] / base["state_GB"]),
         no_pp=no_pp["state_GB"], with_pp=base["state_GB"]))

# %% [markdown] explore-layouts
# ~~ zh fedfd51f
# 自己排一排：GPU 总数固定为上面的 `WORLD`，选 TP 和 PP 的大小、全局 batch 和 micro-batch 大小，看每类通信量、bubble 和每个 GPU 的训练状态怎么变。排不出来的组合（GPU 数或 batch 除不尽），图上会写原因。
# ~~ en 8cde9c4e
# Lay it out yourself: the number of GPUs is fixed at `WORLD` above; choose the TP and PP sizes, the global batch and the micro-batch size, and watch each kind of traffic, the bubble and each GPU's training state change. A combination that cannot be laid out (GPUs or batch not divisible) shows the reason in the figure.

# %%
def layout_explorer(fig, tp, pp, global_batch, micro):
    comm_ax, info_ax = fig.subplots(1, 2, width_ratios=[1.3, 1])
    try:
        x = layout(tp, pp, global_batch, micro)
    except ValueError as err:
        comm_ax.text(0.02, 0.5, str(err), va="center", wrap=True)
        comm_ax.set_axis_off()
        info_ax.set_axis_off()
        return
    kinds = ["TP", "PP", "DP"]
    comm_ax.bar(kinds, [max(x[k], 1e-3) for k in kinds], color=["#C44E52", "#4C72B0", "#55A868"])
    comm_ax.set_yscale("log")
    comm_ax.set_ylabel("GB sent per GPU per iteration")
    comm_ax.set_title(f"t={tp} x p={pp} x d={x['dp']}, m={x['m']}", fontsize=10)
    for i, k in enumerate(kinds):
        comm_ax.text(i, max(x[k], 1e-3), f"{x[k]:.2f}", ha="center", va="bottom", fontsize=8)
    shares = {"bubble": x["bubble"], f"state / {GPU_GB} GB": x["state_GB"] / GPU_GB}
    info_ax.barh(list(shares), list(shares.values()), color=["#8C8C8C", "#DD8452"])
    for i, v in enumerate(shares.values()):
        info_ax.text(v, i, f" {v:.1%}", va="center", fontsize=8)
    info_ax.set_xlim(0, max(1.0, *shares.values()) * 1.15)
    info_ax.set_title(f"bubble {x['bubble']:.1%}, training state {x['state_GB']:.1f} GB per GPU", fontsize=10)


explore(layout_explorer, figsize=(11, 3.2), tp=[8, 1, 2, 4], pp=[4, 1, 2, 8, 16],
        global_batch=[256, 64, 128, 512, 1024], micro=[1, 2, 4])

# %% [markdown] task-global-batch
# ~~ zh 302a663e
# **任务：** 固定 tp=8、pp=4、micro=1，在 `global_batch` 的可选值里找出让 bubble 降到 10% 以下的最小值，写进 `answer_global_batch`。
# ~~ en bc559de1
# **Task:** with tp=8, pp=4 and micro=1 fixed, find the smallest of `global_batch`'s choices that brings the bubble below 10%, and enter it in `answer_global_batch`.

# %%
answer_global_batch = None  # one of 64, 128, 256, 512, 1024

# %% [text] global-batch
# ~~ zh de3435ce
# $d = {dp}$ 条流水线分掉全局 batch，每条拿到 $m = G/d = {m}$ 个 micro-batch，bubble $(p-1)/(m+p-1) = {bubble:.1%}$。全局 batch 通常由收敛性定死，所以 DP 越宽，每条流水线的 $m$ 越小，bubble 越大。
# ~~ en 119087f4
# $d = {dp}$ pipelines share the global batch, each gets $m = G/d = {m}$ micro-batches, and the bubble is $(p-1)/(m+p-1) = {bubble:.1%}$. The global batch is usually fixed by convergence, so the wider DP, the smaller each pipeline's $m$ and the larger its bubble.

# %%
under_10 = [g for g in (64, 128, 256, 512, 1024) if layout(8, 4, g, 1)["bubble"] < 0.10]
smallest = min(under_10) if under_10 else None
chosen = layout(8, 4, smallest, 1) if smallest else {}
md(reveal(answer_global_batch, smallest,
          claim(smallest is not None, text("global-batch", dp=chosen.get("dp"), m=chosen.get("m"),
                                           bubble=chosen.get("bubble", 0.0)), under_10=under_10)))

# %% [markdown] fit
# ~~ zh b9baa495
# ### 8.1 把激活也算进来：哪种布局能把 70B 装进 64 块 80 GB 的 GPU
#
# 上面的训练状态只算了权重、梯度和优化器状态。真正决定装不装得下的，常常是激活：它取决于序列长度、TP/SP、激活重计算的方式，还取决于调度（第 2 章：1F1B 的 rank 0 存着整个模型对一个 micro-batch 的激活）。`course.memory.fit_layouts` 把这些放在一起：对给定的 GPU 数和全局 batch，枚举 (tp, pp, dp, 调度, v, m, 激活重计算) 的每种组合，用模拟器按每个 chunk 的激活字节和 FLOPs 折算的 F、B、W 时间跑一遍，留下最忙的 rank 也装得下的布局，按模拟的单步时间排序。命令行里是 `python -m course memory --fit`。
#
# 下面是 Llama 3 70B、序列长 8192、全局 batch 128 条序列、64 块 80 GB 的 GPU，优化器状态按 ZeRO-1 在 DP 组里切开，每块 GPU 按 400 TFLOP/s 折算计算时间。先只算计算：
# ~~ en 03a3705c
# ### 8.1 Counting activations too: which layout fits 70B into 64 GPUs of 80 GB
#
# The training state above counts only weights, gradients and optimizer states. What decides whether a layout fits is often the activations: they depend on the sequence length, TP/SP and the kind of activation recomputation, and on the schedule (chapter 2: 1F1B's rank 0 holds one whole model's activations for one micro-batch). `course.memory.fit_layouts` puts it all together. For a number of GPUs and a global batch it tries every (tp, pp, dp, schedule, v, m, recomputation), runs the simulator with each chunk's activation bytes and with F, B and W times derived from FLOPs, keeps the layouts whose busiest rank fits, and sorts them by the simulated step time. On the command line it is `python -m course memory --fit`.
#
# Here: Llama 3 70B, sequences of 8192 tokens, a global batch of 128 sequences, 64 GPUs of 80 GB, optimizer states sharded over the DP group with ZeRO-1, compute time at 400 TFLOP/s per GPU. Compute only, first:

# %% [text] fit-head
# ~~ zh aa3caa25
# | tp | pp | dp | 调度 | v | m | 激活重计算 | 最忙的 rank | bubble | 模拟单步 |
# |---|---|---|---|---|---|---|---|---|---|
# ~~ en e53e8d83
# | tp | pp | dp | schedule | v | m | recomputation | busiest rank | bubble | simulated step |
# |---|---|---|---|---|---|---|---|---|---|

# %% [text] fit-intro
# ~~ zh ab59c45b
# {n} 种布局装得下，最快的 10 种：
# ~~ en 53b936d1
# {n} layouts fit; the 10 fastest:

# %% [text] recompute-none
# ~~ zh d88f7d58
# 不做激活重计算的布局一个也装不下
# ~~ en 89f37f2a
# No layout without activation recomputation fits
# %% [text] recompute-few
# ~~ zh d59551e5
# 不做激活重计算能装下的布局只有 {n} 种（共 {total} 种）
# ~~ en 407d7649
# Only {n} of the {total} layouts fit without activation recomputation

# %% [text] recompute-why
# ~~ zh ec9cf057
# ：序列长 8192 时，注意力分数那一项让每层激活翻了好几倍。装得下的布局里 {selective} 种用选择性激活重计算，{full} 种要完全激活重计算。
# ~~ en b13f8ca5
# : at 8192 tokens the attention scores multiply each layer's activations several times over. Of the layouts that fit, {selective} use selective and {full} need full activation recomputation.

# %% [text] first-compute
# ~~ zh 7d41f39d
# 排在最前的是不切流水线的 tp={tp}、pp=1、dp={dp}（峰值 {peak:.1f} GB），而 pp=1 只有 tp=8 时才装得下（{n} 种），靠的是 ZeRO-1 把优化器状态切到 {dp} 个 DP 副本上。它排在最前，是因为这里的单步时间只算了计算：没有 bubble，TP 的 all-reduce 又一分钱没记。切流水线的布局里最快的是 tp={best_tp}、pp={best_pp}、dp={best_dp} 的 {best_schedule}（m={best_m}），bubble {best_bubble:.1%}，只慢 {behind:.1%}。
# ~~ en 2fb214bf
# First comes tp={tp}, pp=1, dp={dp} without a pipeline (peak {peak:.1f} GB); pp=1 fits only with tp=8 ({n} layouts), and only because ZeRO-1 shards the optimizer states over {dp} DP replicas. It comes first because the step time here counts computation only: no bubble, and TP's all-reduces cost nothing at all. The fastest layout with a pipeline is {best_schedule} with tp={best_tp}, pp={best_pp}, dp={best_dp} (m={best_m}), with a {best_bubble:.1%} bubble, only {behind:.1%} slower.

# %% [markdown] fit-comm
# ~~ zh 392f3705
# 这张表的排序建立在"通信不花时间"上。`fit_layouts` 可以按给定的带宽把通信算进去（`--tp-bw`、`--dp-bw`）：TP 的流量按节点内每块 GPU 每秒发 `tp_bw` 字节加到每个 F 和 B 上；PP 每次传输按节点间的 `dp_bw` 折成模拟器的延迟；DP 的梯度 all-reduce 按 `dp_bw` 加在流水线排空之后，不和反向重叠，所以这是它最悲观的代价（Megatron 能把它的一部分藏到反向后面）。下面取 `tp_bw` = 300 GB/s（NVLink 一级）、`dp_bw` = 40 GB/s（每块 GPU 一条 400 Gb/s 的 InfiniBand 链路一级），这两个数是假设，不是测量：
# ~~ en 20914728
# This ranking rests on "communication takes no time". `fit_layouts` can charge communication at given bandwidths (`--tp-bw`, `--dp-bw`): TP traffic, at `tp_bw` bytes per second that each GPU sends inside a node, lengthens every F and B; each PP transfer takes its bytes at the inter-node `dp_bw` as the simulator's latency; and the DP gradient all-reduce at `dp_bw` runs after the pipeline drains, not overlapped with the backward, which charges it at its most pessimistic (Megatron can hide part of it behind the backward). Below, `tp_bw` = 300 GB/s (NVLink class) and `dp_bw` = 40 GB/s (one 400 Gb/s InfiniBand link per GPU): assumptions, not measurements.

# %% [text] fit-comm-head
# ~~ zh edb26059
# | tp | pp | dp | 调度 | v | m | 激活重计算 | bubble | DP 同步 | 模拟单步 |
# |---|---|---|---|---|---|---|---|---|---|
# ~~ en 7a44c68e
# | tp | pp | dp | schedule | v | m | recomputation | bubble | DP sync | simulated step |
# |---|---|---|---|---|---|---|---|---|---|

# %% [text] fit-comm-rank
# ~~ zh 7a022ab7
# 算上通信，最快的变成 tp={tp}、pp={pp}、dp={dp} 的 {schedule}（{step:.2f} s）；不切流水线的 tp=8、pp=1 掉到第 {pos} 名（{pp1:.2f} s，慢 {behind:.1%}）：它的 DP 组最宽，每块 GPU 要同步的梯度最多（DP 同步 {dp_s:.2f} s，第一名只要 {best_dp_s:.2f} s）。
# ~~ en e3cccf76
# With communication charged, the fastest is {schedule} with tp={tp}, pp={pp}, dp={dp} ({step:.2f} s); tp=8, pp=1 without a pipeline drops to place {pos} ({pp1:.2f} s, {behind:.1%} slower): its DP group is the widest, so each GPU has the most gradient to synchronise (a DP sync of {dp_s:.2f} s against {best_dp_s:.2f} s for the winner).

# %% [text] fit-comm-same
# ~~ zh e33c02cf
# 算上通信，不切流水线的 tp=8、pp=1 仍然排第一（{pp1:.2f} s）。
# ~~ en 3ad0c4a7
# With communication charged, tp=8, pp=1 without a pipeline still comes first ({pp1:.2f} s).

# %% [text] fit-hidden
# ~~ zh 8629a1ab
# 可要是 DP 的 all-reduce 能整个藏到反向后面（Megatron 的梯度 all-reduce 重叠追求的就是这个），它又回到第 {pos} 名（{hidden:.2f} s 对 {best_hidden:.2f} s）。所以"切不切流水线"在这里取决于 DP 同步能重叠多少，而这个模型不知道。
# ~~ en ba2f5009
# But if the DP all-reduce hid entirely behind the backward (what Megatron's overlap of the gradient all-reduce aims for), it would be back at place {pos} ({hidden:.2f} s against {best_hidden:.2f} s). So "pipeline or not" here hinges on how much of the DP sync overlaps, and this model does not know that.

# %% [text] fit-hidden-no
# ~~ zh f77a13ac
# 就算 DP 的 all-reduce 整个藏到反向后面，它也只排到第 {pos} 名（{hidden:.2f} s 对 {best_hidden:.2f} s）。
# ~~ en dd48c2b1
# Even with the DP all-reduce hidden entirely behind the backward it only reaches place {pos} ({hidden:.2f} s against {best_hidden:.2f} s).

# %% [text] fit-robust
# ~~ zh 5d5de46a
# 三种算法都同意的是：前 10 名全是 tp=8 加选择性激活重计算，前 10 名之间只差 {spread:.1%}。这个差距比带宽、DP 重叠和"每块 GPU 恒定 400 TFLOP/s"这几个假设能分辨的还小：在这个范围里挑哪一个，要靠在真机上量。
# ~~ en 30036849
# What all three ways of counting agree on: the top 10 are all tp=8 with selective activation recomputation, and they lie within {spread:.1%} of each other. That is less than the bandwidths, the DP overlap and the flat 400 TFLOP/s per GPU can resolve: choosing among them takes a measurement on the real machine.

# %% [text] fit-robust-no
# ~~ zh 97735734
# 三种算法的前 10 名并不一致（tp 和激活重计算方式的组合有 {combos} 种），前 10 名之间最多差 {spread:.1%}：结论取决于通信怎么算。
# ~~ en 5a8e35a1
# The three ways of counting disagree on their top 10 ({combos} combinations of tp and recomputation), which lie within {spread:.1%} of each other: the conclusion depends on how communication is counted.

# %%
LLAMA70 = PRESETS["llama3-70b"]
FIT = dict(gpus=64, gpu_mem=80e9, global_batch=128, seq=8192, zero=1, flops_per_s=400e12)
TP_BW, DP_BW = 300e9, 40e9
fits = fit_layouts(LLAMA70, **FIT)
md(text("fit-intro", n=len(fits)) + "\n\n" + text("fit-head") + "\n"
   + "\n".join(f"| {r['tp']} | {r['pp']} | {r['dp']} | {r['schedule']} | {r['v'] or ''} | {r['m']} | {r['recompute']} | "
               f"{r['peak_bytes'] / 1e9:.1f} GB | {max(r['bubble'], 0.0):.1%} | {r['step_s']:.2f} s |" for r in fits[:10]))

# %%
by_recompute = Counter(r["recompute"] for r in fits)
no_pp_fits = [r for r in fits if r["pp"] == 1]
best_pp = min((r for r in fits if r["pp"] > 1), key=lambda r: r["step_s"])
none_fit = by_recompute["none"]
md(claim(none_fit <= 0.05 * len(fits) and by_recompute["selective"] > 0,
         (text("recompute-none") if none_fit == 0 else text("recompute-few", n=none_fit, total=len(fits)))
         + text("recompute-why", selective=by_recompute["selective"], full=by_recompute["full"]),
         by_recompute=dict(by_recompute)))
top = fits[0]
md(claim(top["pp"] == 1 and top["tp"] == 8 and all(r["tp"] == 8 for r in no_pp_fits) and best_pp["bubble"] > 0,
         text("first-compute", tp=top["tp"], dp=top["dp"], peak=top["peak_bytes"] / 1e9, n=len(no_pp_fits),
              best_tp=best_pp["tp"], best_pp=best_pp["pp"], best_dp=best_pp["dp"], best_schedule=best_pp["schedule"],
              best_m=best_pp["m"], best_bubble=best_pp["bubble"], behind=best_pp["step_s"] / top["step_s"] - 1),
         top=top, best_pp=best_pp))

# %%
fits_comm = fit_layouts(LLAMA70, **FIT, tp_bw=TP_BW, dp_bw=DP_BW)
md(text("fit-comm-head") + "\n"
   + "\n".join(f"| {r['tp']} | {r['pp']} | {r['dp']} | {r['schedule']} | {r['v'] or ''} | {r['m']} | {r['recompute']} | "
               f"{max(r['bubble'], 0.0):.1%} | {r['dp_s']:.2f} s | {r['step_s']:.2f} s |" for r in fits_comm[:10]))


def place(rows, key=lambda r: r["step_s"]):
    """1-based place of the best pp = 1 layout when ``rows`` are sorted by ``key``, and the sorted rows."""
    ranked = sorted(rows, key=key)
    return next(i for i, r in enumerate(ranked) if r["pp"] == 1) + 1, ranked


pos_comm, ranked_comm = place(fits_comm)
pp1 = ranked_comm[pos_comm - 1]
winner = ranked_comm[0]
def hidden(r):
    return r["step_s"] - r["dp_s"]


pos_hidden, ranked_hidden = place(fits_comm, hidden)
md(claim(pos_comm > 1, text("fit-comm-rank", tp=winner["tp"], pp=winner["pp"], dp=winner["dp"],
                            schedule=winner["schedule"], step=winner["step_s"], pos=pos_comm, pp1=pp1["step_s"],
                            behind=pp1["step_s"] / winner["step_s"] - 1, dp_s=pp1["dp_s"],
                            best_dp_s=winner["dp_s"]),
         otherwise=text("fit-comm-same", pp1=pp1["step_s"]))
   + space() + claim(pos_hidden == 1, text("fit-hidden", pos=pos_hidden, hidden=hidden(pp1),
                                 best_hidden=hidden(ranked_hidden[0] if pos_hidden > 1 else ranked_hidden[1])),
           otherwise=text("fit-hidden-no", pos=pos_hidden, hidden=hidden(pp1), best_hidden=hidden(ranked_hidden[0]))))
tops = [fits[:10], ranked_comm[:10], ranked_hidden[:10]]
combos = {(r["tp"], r["recompute"]) for rows in tops for r in rows}
spread = max(rows[9]["step_s"] / rows[0]["step_s"] - 1 for rows in (fits, ranked_comm)) if len(fits) >= 10 else 0.0
md(claim(combos == {(8, "selective")}, text("fit-robust", spread=spread),
         otherwise=text("fit-robust-no", combos=len(combos), spread=spread)))

# %% [markdown] clinic
# ~~ zh f507b8f3
# ## 9. PP 门诊：最常问的六个问题
#
# 每个问题一段能跑的复现、一个检查。带 torch 的格子各自独立：要用的模块自己导入，自己算完。
#
# ### 9.1 $m < p$，而且最后一个 micro-batch 不满
#
# 全局 batch 除不尽 micro-batch 大小时，最后一个 micro-batch 就小一些；DP 很宽时，每条流水线分到的 $m$ 甚至比 stage 数还少。还能跑吗？代价多大？梯度对不对？
# ~~ en 964af958
# ## 9. The PP clinic: the six questions asked most
#
# Each question gets a reproduction you can run and a check. The cells with torch are self-contained (they import and compute everything themselves).
#
# ### 9.1 $m < p$, and a last micro-batch that is not full
#
# When the global batch is not a multiple of the micro-batch size, the last micro-batch is smaller; when DP is wide, each pipeline may even get fewer micro-batches than it has stages. Does it still run? What does it cost? Are the gradients right?

# %% [text] few-bubble
# ~~ zh cd3f570b
# 1F1B，$p={p}$、$m={m}$：bubble 是 {bubble:.0%} $= (p-1)/(m+p-1)$，每个 rank 的峰值 {peaks} $= \min(m, p-s)$（两个式子在 $p$ 取 2..8、$m$ 取 $1..p-1$、F、B 各取 [0.5, 2] 的 {checked} 个采样点上都成立）。预热只能做 $\min(p-s-1, m)$ 个前向，流水线一直没灌满：$m<p$ 能跑，但大半时间空着。办法是少切几段，或者让每条流水线分到更多 micro-batch（DP 窄一点）。
# ~~ en c5d30318
# 1F1B with $p={p}$ and $m={m}$: the bubble is {bubble:.0%} $= (p-1)/(m+p-1)$ and the peak per rank is {peaks} $= \min(m, p-s)$ (both hold at {checked} sampled points with $p$ in 2..8, $m$ in $1..p-1$ and F, B each in [0.5, 2]). The warm-up can run only $\min(p-s-1, m)$ forwards and the pipeline never fills: $m<p$ runs, but sits idle most of the time. The remedies are fewer stages, or more micro-batches per pipeline (narrower DP).

# %% [text] few-torch
# ~~ zh e89ecc22
# torch 的 `Schedule1F1B` 直接拒绝：“{why}”；课程的 plan 和第 3 章那个预热 $\min(p-s-1, m)$ 的循环都照跑。
# ~~ en 903c65e6
# torch's `Schedule1F1B` refuses outright: "{why}"; the course's plan and chapter 3's loop, with its warm-up of $\min(p-s-1, m)$, run it.

# %% [text] few-torch-accepts
# ~~ zh 71cffc24
# 这个版本的 torch 的 `Schedule1F1B` 接受 $m<p$。
# ~~ en 2b10ab1e
# This version of torch's `Schedule1F1B` accepts $m<p$.

# %% [text] few-grad
# ~~ zh 01e0f0da
# 在 {p} 个 gloo 进程上真跑，每个 micro-batch 的有效 token 数是 {lengths}（最后一个只有 1 个）：梯度和单进程按 token 平均的参考结果差 {err:.1e}。换成"每个 micro-batch 先按自己的 token 平均，再除以 $m$"，就差了 {wrong:.2f}：最后一个 micro-batch 不满时，每个 micro-batch 的 token 误差之和要除以整个 batch 的 token 数（第 3 章 §4）。
# ~~ en bd8cf711
# Run on {p} gloo processes with {lengths} valid tokens per micro-batch (the last holds only 1), the gradients differ from the single-process token-mean reference by {err:.1e}. Take "each micro-batch's own token mean, divided by $m$" instead and they are off by {wrong:.2f}: when the last micro-batch is not full, each micro-batch's token sum must be divided by the whole batch's token count (chapter 3 §4).

# %%
from course import minipipe  # torch and gloo processes: this cell computes, the next one shows

P_A, M_A, LENGTHS_A = 4, 2, [4, 1]
try:
    torch_order("Schedule1F1B", P_A, M_A)
    torch_says = None
except ValueError as err:
    torch_says = str(err)
reference_a = minipipe.reference(P_A, M_A, LENGTHS_A)
err_a = minipipe.max_error(minipipe.run(P_A, M_A, "parity", lengths=LENGTHS_A), reference_a)
stages_a = [minipipe.stage(s) for s in range(P_A)]
x_a, y_a, mask_a = minipipe.batch(M_A, LENGTHS_A)
for i in range(M_A):            # the tempting normalisation: each micro-batch's own token mean, over m
    out = x_a[i]
    for st in stages_a:
        out = st(out)
    (minipipe.token_loss(out, y_a[i], mask_a[i], mask_a[i].sum()) / M_A).backward()
wrong_a = minipipe.max_error([[q.grad for q in st.parameters()] for st in stages_a], reference_a)

# %%
few = simulate(build("1f1b", P_A, M_A))


def few_micro_batches(p, k, f, b):
    """1F1B with m < p (m = 1 + k mod (p - 1)): the bubble formula and the peaks min(m, p - s) still hold."""
    m = 1 + k % (p - 1)
    tl = simulate(build("1f1b", p, m), Costs(f=f, b=b, w=0.0))
    return abs(tl.bubble_ratio - (p - 1) / (m + p - 1)) < 1e-9 and tl.peak_activations == [min(m, p - s) for s in range(p)]


swept_few = sweep(few_micro_batches, {"p": (2, 8), "k": (0, 6), "f": (0.5, 2.0), "b": (0.5, 2.0)}, 60, seed=8)
md(claim(abs(few.bubble_ratio - (P_A - 1) / (M_A + P_A - 1)) < 1e-12
         and few.peak_activations == [min(M_A, P_A - s) for s in range(P_A)] and swept_few.holds,
         text("few-bubble", p=P_A, m=M_A, bubble=few.bubble_ratio, peaks=few.peak_activations,
              checked=swept_few.checked), bubble=few.bubble_ratio, peaks=few.peak_activations, **swept_few.figures())
   + space() + claim(torch_says is not None, text("few-torch", why=torch_says), otherwise=text("few-torch-accepts"))
   + space() + claim(err_a < 1e-10 and wrong_a > 1e-3, text("few-grad", p=P_A, lengths=LENGTHS_A, err=err_a, wrong=wrong_a),
           err=err_a, wrong=wrong_a))

# %% [markdown] clinic-summed
# ~~ zh a7350a7b
# ### 9.2 梯度按 micro-batch 加起来，而不是平均
#
# 每个 micro-batch 的 loss 都是自己那份数据的平均，累加梯度时忘了除以 $m$。下一格用同一个模型、同一个 batch 比较两种累加，再从同一组权重出发各走一步 SGD 和 Adam。
# ~~ en ea914866
# ### 9.2 Gradients summed over micro-batches instead of averaged
#
# Each micro-batch's loss is the mean over its own data, and the gradients are accumulated without dividing by $m$. The next cell compares both accumulations on the same model and batch, then takes one SGD step and one Adam step from the same weights with each.

# %% [text] summed
# ~~ zh bd4bd3bb
# 加起来的梯度正好是正确值的 $m={m}$ 倍（最大偏差 {err:.1e}）。SGD 的一步跟着大了 {sgd:.2f} 倍，相当于学习率悄悄乘了 $m$；Adam 的一步几乎不变（最大差 {adam:.1e}，学习率是 {lr:g}）：一阶矩和二阶矩的平方根一起放大，更新量对梯度乘上的常数不敏感。所以用 Adam 时这个错误藏得住，直到换优化器、打开梯度裁剪（阈值相当于紧了 $m$ 倍），或者改 $m$ 让记录的 loss 跟着跳。
# ~~ en bda73062
# The summed gradients are exactly $m={m}$ times the right ones (largest deviation {err:.1e}). SGD's step grows {sgd:.2f} times, as if the learning rate had quietly been multiplied by $m$; Adam's step hardly changes (largest difference {adam:.1e} at a learning rate of {lr:g}): its first moment and the square root of its second grow together, so its update ignores a constant factor on the gradients. With Adam the mistake stays hidden until you change the optimizer, turn on gradient clipping (whose threshold is then effectively $m$ times tighter), or change $m$ and watch the logged loss jump with it.

# %%
import torch  # this cell computes with torch, the next one shows

from course import minipipe

P_B, M_B = 4, 8
lengths_b = [minipipe.ROWS] * M_B
right = minipipe.reference(P_B, M_B, lengths_b)
stages_b = [minipipe.stage(s) for s in range(P_B)]
x_b, y_b, mask_b = minipipe.batch(M_B, lengths_b)
for i in range(M_B):            # each micro-batch's own mean, accumulated without dividing by m
    out = x_b[i]
    for st in stages_b:
        out = st(out)
    minipipe.token_loss(out, y_b[i], mask_b[i], mask_b[i].sum()).backward()
summed = [[q.grad for q in st.parameters()] for st in stages_b]
err_b = max((s_ - M_B * r_).abs().max().item() for ss, rs in zip(summed, right) for s_, r_ in zip(ss, rs))
flat = {name: torch.cat([g.flatten() for gs in grads for g in gs]) for name, grads in (("right", right), ("summed", summed))}
LR = 1e-3


def one_step(optimizer, grad):
    """The change one optimizer step makes to weights that start at zero, given this gradient."""
    w = torch.zeros_like(grad, requires_grad=True)
    opt = optimizer([w], lr=LR)
    w.grad = grad.clone()
    opt.step()
    return w.detach()


sgd = [one_step(torch.optim.SGD, flat[k]) for k in ("right", "summed")]
adam = [one_step(torch.optim.Adam, flat[k]) for k in ("right", "summed")]
sgd_ratio = (sgd[1].norm() / sgd[0].norm()).item()
adam_diff = (adam[1] - adam[0]).abs().max().item()

# %%
md(claim(err_b < 1e-10 and abs(sgd_ratio - M_B) < 1e-9 and adam_diff < 1e-3 * LR,
         text("summed", m=M_B, err=err_b, sgd=sgd_ratio, adam=adam_diff, lr=LR),
         err=err_b, sgd=sgd_ratio, adam=adam_diff))

# %% [markdown] clinic-labels
# ~~ zh cd640ff9
# ### 9.3 loss 用了一个 micro-batch 的输出和另一个 micro-batch 的标签
#
# 算 loss 的 rank 要拿到和输出对应的标签。常见的写法是每个算 loss 的 rank 从自己的数据迭代器里按顺序取下一份标签。1F1B 只有最后一个 rank 算 loss，而且按 micro-batch 编号的顺序算，这样写没问题；换成 DualPipe，两个方向的最后一个 stage 分别在 rank $p-1$ 和 rank 0 上。
# ~~ en 7a9fda90
# ### 9.3 A loss computed from one micro-batch's outputs and another's labels
#
# The rank that computes a loss needs the labels that go with its outputs. A common way to write it: every rank that computes a loss takes the next labels from its own data iterator, in order. In 1F1B only the last rank computes losses, in the order of the micro-batch numbers, and this works; switch to DualPipe and the last stages of its two directions sit on rank $p-1$ and on rank 0.

# %% [markdown] predict-labels
# ~~ zh e55cb082
# **预测：** DualPipe，$p=4$、$m=8$，每个算 loss 的 rank 都从自己的迭代器里按顺序取标签。8 个 micro-batch 里有几个拿到的是别的 micro-batch 的标签？
# ~~ en d4aa4e72
# **Predict:** DualPipe with $p=4$ and $m=8$, where every rank that computes a loss takes labels from its own iterator, in order. How many of the 8 micro-batches get another micro-batch's labels?

# %%
guess_mismatched = None     # a number of micro-batches

# %% [text] labels
# ~~ zh 2d75aaf4
# 算 loss 的 rank 和它们算 loss 的顺序：1F1B {one_f_one_b}，DualPipe {dualpipe}。按顺序取标签，1F1B 有 {bad_1f1b} 个 micro-batch 配错，DualPipe 有 {bad_dualpipe} 个：rank 0 算的是 micro-batch {rank0}，拿到的却是标签 {labels0}。在 $p$ 取 2、4、6、8，$m$ 取 $2p$、$4p$、$6p$ 的 {checked} 个点上，1F1B 一个也不配错，DualPipe 总是配错一半（$m/2$ 个）。
# ~~ en be005056
# The ranks that compute losses, and the order in which they compute them: 1F1B {one_f_one_b}, DualPipe {dualpipe}. Taking labels in order mismatches {bad_1f1b} micro-batches in 1F1B and {bad_dualpipe} in DualPipe: rank 0 computes micro-batches {rank0} but gets labels {labels0}. At {checked} points with $p$ of 2, 4, 6, 8 and $m$ of $2p$, $4p$, $6p$, 1F1B mismatches none and DualPipe always half ($m/2$).

# %% [text] labels-grad
# ~~ zh f62b6408
# 这样配出来的梯度和正确的差 {wrong:.2f}，loss 照样能算，什么也不报错；按 micro-batch 编号取标签（torch 的 `step(target=...)` 就是把标签和输入一起切分、按编号取），差 {right:.1e}。排查的办法：在第一个和算 loss 的 stage 上都记下每个 micro-batch 的样本编号，逐个对一遍。
# ~~ en ddc632f3
# Paired this way, the gradients are off by {wrong:.2f}; the loss still computes and nothing raises. Taking labels by micro-batch number (torch's `step(target=...)` splits the targets together with the inputs and picks them by number) leaves {right:.1e}. How to catch it: log every micro-batch's sample ids on the first stage and on the stage that computes the loss, and compare them one by one.

# %%
def loss_order(plan):
    """Per rank that computes a loss: the micro-batches whose loss it computes, in the order it runs them."""
    last = {s for s, k in plan.chunk_of_stage().items() if k == plan.chunks - 1}
    order = {r: [op.mb for st in steps for op in ops_of(st) if op.kind == "F" and op.stage in last]
             for r, steps in enumerate(plan.ranks)}
    return {r: mbs for r, mbs in order.items() if mbs}


def labels_in_order(order):
    """Micro-batch -> the labels it gets when each loss rank takes the next labels of its own iterator."""
    return {mb: k for mbs in order.values() for k, mb in enumerate(mbs)}


def mismatched(name, p, m):
    got = labels_in_order(loss_order(build(name, p, m)))
    return sum(got[mb] != mb for mb in got)


orders = {name: loss_order(build(name, 4, 8)) for name in ("1f1b", "dualpipe")}
got = {name: labels_in_order(o) for name, o in orders.items()}
bad = {name: mismatched(name, 4, 8) for name in orders}
swept_labels = sweep(lambda p, k: mismatched("1f1b", p, 2 * k * p) == 0 and mismatched("dualpipe", p, 2 * k * p) == k * p,
                     {"p": [2, 4, 6, 8], "k": [1, 2, 3]}, 12, seed=8)


# %%
from course import minipipe  # this cell computes with torch, the next one shows


def pipeline_grads(label_of):
    """Gradients of a 4-stage chain on an 8-micro-batch batch when micro-batch i is scored against labels label_of[i]."""
    stages = [minipipe.stage(s) for s in range(4)]
    x, y, mask = minipipe.batch(8, [minipipe.ROWS] * 8)
    for i in range(8):
        out = x[i]
        for st in stages:
            out = st(out)
        minipipe.token_loss(out, y[label_of[i]], mask[i], mask.sum()).backward()
    return [[q.grad for q in st.parameters()] for st in stages]


reference_c = minipipe.reference(4, 8, [minipipe.ROWS] * 8)
wrong_c = minipipe.max_error(pipeline_grads(got["dualpipe"]), reference_c)
right_c = minipipe.max_error(pipeline_grads({i: i for i in range(8)}), reference_c)

# %%
md(reveal(guess_mismatched, bad["dualpipe"],
          claim(bad["1f1b"] == 0 and bad["dualpipe"] > 0 and swept_labels.holds,
                text("labels", one_f_one_b=orders["1f1b"], dualpipe=orders["dualpipe"], bad_1f1b=bad["1f1b"],
                     bad_dualpipe=bad["dualpipe"], rank0=orders["dualpipe"].get(0),
                     labels0=[got["dualpipe"][mb] for mb in orders["dualpipe"].get(0, [])],
                     checked=swept_labels.checked), bad=bad, **swept_labels.figures())
          + space() + claim(wrong_c > 1e-3 and right_c < 1e-12, text("labels-grad", wrong=wrong_c, right=right_c),
                  wrong=wrong_c, right=right_c)))

# %% [markdown] clinic-embedding
# ~~ zh cc46a442
# ### 9.4 embedding 要不要单独放一个 stage？stage 0 到底存了多少字节
#
# Llama 3 8B 的词表有 128256 个词，embedding 是 $V \times h$ = 5.25 亿个参数，比一层 transformer（2.18 亿）大一倍多；lm_head 一样大，还要在最后一个 stage 上存 fp32 的 logits。下面按 `course.memory` 的部件逐个 stage 数字节（序列长 8192、micro-batch 1 条、不开 TP、选择性激活重计算、1F1B、$m=8$），时间由 `course.memory.chunk_times` 的每层 FLOPs 按 400 TFLOP/s 折算（lm_head 的 FLOPs 算在最后一个 stage 上，embedding 只是查表，记作 0）。比较四种切法：平均切；embedding 单独占一个 stage（多用一块 GPU）；Llama 3 的做法，首尾两个 stage 各少一层；只从 stage 0 拿走一层。
# ~~ en f1ecacd8
# ### 9.4 Should the embedding get a stage of its own? How many bytes does stage 0 really hold?
#
# Llama 3 8B has a vocabulary of 128256 tokens, so its embedding is $V \times h$ = 525 million parameters, more than twice a transformer layer (218 million); lm_head is as large and also keeps the fp32 logits on the last stage. Below, stage by stage, the bytes counted with `course.memory`'s parts (sequences of 8192 tokens, one per micro-batch, no TP, selective activation recomputation, 1F1B, $m=8$), and the time from `course.memory.chunk_times`'s per-layer FLOPs at 400 TFLOP/s (lm_head's FLOPs on the last stage; the embedding is a table lookup, counted as 0). Four ways to cut it: evenly; the embedding on a stage of its own (one more GPU); Llama 3's way, one layer fewer on the first and on the last stage; one layer taken off stage 0 only.

# %% [text] embedding-head
# ~~ zh eede37b8
# | 切法 | 每个 stage 的层数 | 每个 rank 的字节（GB） | 最多的一个 | 模拟单步 | GPU 数 |
# |---|---|---|---|---|---|
# ~~ en 6746d50f
# | cut | layers per stage | bytes per rank (GB) | the most | simulated step | GPUs |
# |---|---|---|---|---|---|

# %% [text] cut-even
# ~~ zh a49ffd73
# 平均
# ~~ en ec38063c
# even
# %% [text] cut-own
# ~~ zh b1208886
# embedding 单独一段
# ~~ en 925ff8b8
# embedding alone
# %% [text] cut-llama
# ~~ zh 56f0f8f0
# 首尾各少一层
# ~~ en d386e720
# one fewer at both ends
# %% [text] cut-first
# ~~ zh e440588d
# stage 0 少一层
# ~~ en 94844224
# one fewer on stage 0

# %% [text] embedding-read
# ~~ zh c10a3466
# 平均切时 rank 0 存得最多：{rank0:.1f} GB，比中间的 rank 1 多 {more:.1f} GB，其中 embedding 的训练状态（16 字节/参数）是 {emb:.1f} GB，剩下的是 1F1B 让它多存的一个 micro-batch 的激活。embedding 单独一段只拿走那 {emb:.1f} GB 的状态，激活最多的那个 rank 换成了下一个（{own_top:.1f} GB），单步不变（{own_step:.3f} s 对 {even_step:.3f} s），还多占一块几乎一直空着的 GPU（整体 bubble 从 {even_bubble:.0%} 涨到 {own_bubble:.0%}）。首尾各少一层既把最多的降到 {llama_top:.1f} GB，又因为最后一个 stage 扛着 lm_head、少一层正好让它不再是瓶颈，单步快了 {faster:.1%}。只从 stage 0 拿走一层省下同样多的字节，单步却不变：瓶颈还在最后一个 stage。
# ~~ en 3aab3e9b
# Cut evenly, rank 0 holds the most: {rank0:.1f} GB, {more:.1f} GB more than rank 1 in the middle, of which the embedding's training state (16 bytes per parameter) is {emb:.1f} GB and the rest the one extra micro-batch of activations 1F1B makes it keep. The embedding on its own stage removes only those {emb:.1f} GB of state; the rank with the most activations is now the next one ({own_top:.1f} GB), the step stays the same ({own_step:.3f} s against {even_step:.3f} s), and one more GPU sits idle nearly all the time (the bubble over all ranks grows from {even_bubble:.0%} to {own_bubble:.0%}). One layer fewer at both ends brings the most down to {llama_top:.1f} GB and, because the last stage carries lm_head, one layer less stops it being the bottleneck: the step is {faster:.1%} faster. Taking a layer off stage 0 alone saves the same bytes but not time: the bottleneck is still the last stage.

# %%
M_D = 8
cfg_d = ActivationConfig(seq=8192, mbs=1, recompute="selective")
layer_state, emb_state, head_state = (sum(static_bytes(sum(params))) for params in
                                      (LLAMA8.layer_params(), LLAMA8.embedding_params(), LLAMA8.head_params()))
layer_act, first_act, last_act = (layer_activation_bytes(LLAMA8, cfg_d), embedding_activation_bytes(LLAMA8, cfg_d),
                                  output_activation_bytes(LLAMA8, cfg_d))
f4, b4, w4 = chunk_times(LLAMA8, cfg_d, 4, 400e12)        # even chunks: per layer from a middle one, lm_head = rest
per_layer = [x[1] / (LLAMA8.layers // 4) for x in (f4, b4, w4)]
head = [x[3] - x[1] for x in (f4, b4, w4)]


def cut(layers):
    """Per rank (state, activations) bytes under 1F1B and the simulated step, for stages holding ``layers``
    (0 layers: the embedding alone); the embedding sits on stage 0, lm_head on the last."""
    p = len(layers)
    rows = []
    for s, n in enumerate(layers):
        state = n * layer_state + (emb_state if s == 0 else 0) + (head_state if s == p - 1 else 0)
        held = n * layer_act + (first_act if s == 0 else 0) + (last_act if s == p - 1 else 0)
        rows.append((state, min(M_D, p - s) * held))
    times = [[n * t + (h if s == p - 1 else 0) + 1e-9 for s, n in enumerate(layers)] for t, h in zip(per_layer, head)]
    tl = simulate(build("1f1b", p, M_D), Costs(f=times[0], b=times[1], w=times[2]))
    return rows, tl


cuts = {"even": [8, 8, 8, 8], "own": [0, 8, 8, 8, 8], "llama": [7, 9, 9, 7], "first": [7, 9, 8, 8]}
cut_names = {"even": "cut-even", "own": "cut-own", "llama": "cut-llama", "first": "cut-first"}
results = {k: cut(v) for k, v in cuts.items()}
library = pipeline_memory(build("1f1b", 4, M_D), LLAMA8, cfg_d)
assert [s + a for s, a in results["even"][0]] == [r.total for r in library.ranks]   # same count as course.memory
lines = [text("embedding-head")]
for k, layers in cuts.items():
    rows, tl = results[k]
    lines.append(f"| {text(cut_names[k])} | {layers} | {', '.join(f'{(s + a) / 1e9:.1f}' for s, a in rows)} | "
                 f"{max(s + a for s, a in rows) / 1e9:.1f} | {tl.makespan:.3f} s | {len(layers)} |")
md("\n".join(lines))
top_of = {k: max(s + a for s, a in rows) for k, (rows, _) in results.items()}
step_of = {k: tl.makespan for k, (_, tl) in results.items()}
even_rows = results["even"][0]
extra_mb = LLAMA8.layers // 4 * layer_act    # rank 0 keeps one more micro-batch of its 8 layers than rank 1
md(claim(top_of["even"] == sum(even_rows[0]) and sum(even_rows[0]) - sum(even_rows[1]) == emb_state + extra_mb
         and top_of["llama"] < top_of["even"] and top_of["own"] < top_of["even"] and top_of["first"] == top_of["llama"]
         and step_of["own"] >= step_of["even"] - 1e-9 and step_of["llama"] < step_of["even"]
         and abs(step_of["first"] - step_of["even"]) < 1e-9,
         text("embedding-read", rank0=sum(even_rows[0]) / 1e9, more=(sum(even_rows[0]) - sum(even_rows[1])) / 1e9,
              emb=emb_state / 1e9, own_top=top_of["own"] / 1e9, own_step=step_of["own"], even_step=step_of["even"],
              even_bubble=results["even"][1].bubble_ratio, own_bubble=results["own"][1].bubble_ratio,
              llama_top=top_of["llama"] / 1e9, faster=1 - step_of["llama"] / step_of["even"]),
         top=top_of, step=step_of))

# %% [markdown] clinic-hang
# ~~ zh b264c53e
# ### 9.5 hang 住了：每个 rank 停在哪
#
# §6 的 hang 是一个环：两个 rank 互相等。另一种同样常见：各 rank 对 $m$ 的理解不一样（比如梯度累积步数是在每个 rank 上各自算出来的），其中一个 rank 少做了一个 micro-batch。下一格在 4 个 gloo 进程上跑第 3 章的 1F1B 循环（批量收发），最后一个 rank 的 $m$ 少 1，每个 rank 做完都进入迭代末尾的 barrier。看门狗报告每个 rank 的栈；把栈里 `minipipe.worker` 的行号对到那个循环的三段（预热、稳定阶段、收尾），就是每个 rank 的位置：
# ~~ en 5b9868b2
# ### 9.5 It hangs: where is each rank stuck?
#
# The hang of §6 is a cycle: two ranks waiting for each other. Another is just as common: the ranks disagree about $m$ (say, each rank computes its gradient-accumulation steps by itself), and one rank runs one micro-batch fewer. The next cell runs chapter 3's 1F1B loop (batched send/recv) on 4 gloo processes, the last rank with $m$ one less, and every rank enters the end-of-step barrier when it is done. The watchdog reports every rank's stack; match the line numbers of `minipipe.worker` in it to the loop's three parts (warm-up, steady state, cool-down), and you have each rank's position:

# %% [text] stuck-head
# ~~ zh c631e4cd
# | rank | 停在 | 看门狗的报告 |
# |---|---|---|
# ~~ en 77163487
# | rank | stuck in | the watchdog's report |
# |---|---|---|

# %% [text] phase-warm-up
# ~~ zh 2051831c
# 预热
# ~~ en b64f4598
# warm-up
# %% [text] phase-steady
# ~~ zh 434c8144
# 稳定阶段
# ~~ en 02929c14
# steady state
# %% [text] phase-cool-down
# ~~ zh 3615b021
# 收尾
# ~~ en 2d1a7eea
# cool-down
# %% [text] phase-barrier
# ~~ zh b2383bb6
# 迭代末尾的 barrier
# ~~ en 0553efc4
# the end-of-step barrier
# %% [text] phase-unknown
# ~~ zh 3a1610de
# 别处
# ~~ en 7b1b763e
# elsewhere

# %% [text] stuck-read
# ~~ zh b4e69157
# 读法：rank {last} 已经做完了自己的 micro-batch，在 barrier 里等；其余 rank 还在流水线里，等的是一个 rank {last} 永远不会算的 micro-batch。没有环，只有一个"提前做完"的 rank：先查各 rank 的 $m$（梯度累积步数）是不是一样。
# ~~ en 4952b044
# How to read it: rank {last} has finished its micro-batches and waits in the barrier; every other rank is still inside the pipeline, waiting for a micro-batch rank {last} will never compute. No cycle, just one rank that "finished early": check first that every rank has the same $m$ (gradient-accumulation steps).

# %% [text] stuck-other
# ~~ zh 6af1ae43
# 这次报告和预想的不一样（没有一个 rank 单独停在 barrier 里）：逐个看每个 rank 的栈。
# ~~ en b3126205
# This report differs from the expected one (no rank waits alone in the barrier): read each rank's stack in turn.

# %%
try:                            # gloo processes: this cell computes, the next one reads the report
    launch(demos.short_last_rank, 4, args=(4,), stall=2.0, timeout=60, echo=False)
    short = None
except DeadlockDetected as err:
    short = err
assert short is not None, "ranks that disagree about m were expected to hang"

# %%
source = Path(importlib.util.find_spec("course.minipipe").origin).read_text(encoding="utf-8").splitlines()
loops = {phase: n for n, line in enumerate(source, 1)                 # the loop headers of minipipe.worker
         for phase, head in (("warm-up", "for i in range(warmup)"), ("steady", "for k in range(m - warmup)"),
                             ("cool-down", "for i in range(m - warmup, m)")) if head in line}


def phase_of(stack):
    """The part of minipipe's 1F1B loop a rank's stack is in, or the barrier."""
    lines = [int(n) for n in re.findall(r'minipipe\.py", line (\d+) in worker', stack)]
    if lines:
        return max((start, phase) for phase, start in loops.items() if start <= lines[0])[1]
    return "barrier" if re.search(r"line \d+ in barrier", stack) else "unknown"


where = {r: phase_of(short.stacks.get(r, "")) for r in range(4)}
phase_names = {"warm-up": "phase-warm-up", "steady": "phase-steady", "cool-down": "phase-cool-down",
               "barrier": "phase-barrier", "unknown": "phase-unknown"}
md("\n".join([text("stuck-head")] + [f"| {r} | {text(phase_names[where[r]])} | `{short.states.get(r, '')}` |"
                                      for r in range(4)]))
md(claim(where[3] == "barrier" and all(where[r] in ("warm-up", "steady", "cool-down") for r in range(3)),
         text("stuck-read", last=3), otherwise=text("stuck-other"), where=where))

# %% [markdown] clinic-3d
# ~~ zh 92904619
# ### 9.6 PP 和 DP、TP 怎么组合：各自加了多少字节
#
# 同一个模型（Llama 3 8B、序列长 4096、全局 batch 32 条序列、选择性激活重计算、1F1B）放到 8 块 GPU 上，每次只沿一个方向放大 8 倍，再看一个 2 × 2 × 2 的混合。每一行都是每块 GPU 的字节：训练状态和激活峰值（`course.memory.pipeline_memory`，取最多的那个 rank），以及一次迭代发出去的 TP、PP、DP 流量（`course.memory.step_traffic`）：
# ~~ en 2e9b32b7
# ### 9.6 How PP combines with DP and TP: what each adds, in bytes
#
# One model (Llama 3 8B, 4096-token sequences, a global batch of 32 sequences, selective activation recomputation, 1F1B) on 8 GPUs, scaled by 8 along one axis at a time, plus a 2 × 2 × 2 mix. Every row is bytes per GPU: the training state and the activation peak (`course.memory.pipeline_memory`, the rank that holds the most), and the TP, PP and DP traffic one iteration sends (`course.memory.step_traffic`):

# %% [text] ledger-head
# ~~ zh 0ba7ab13
# | t × p × d | ZeRO-1 | m | 训练状态 GB | 激活峰值 GB | TP GB | PP GB | DP GB |
# |---|---|---|---|---|---|---|---|
# ~~ en 7734dda2
# | t × p × d | ZeRO-1 | m | state GB | activation peak GB | TP GB | PP GB | DP GB |
# |---|---|---|---|---|---|---|---|

# %% [text] ledger-read
# ~~ zh a6c9070d
# 逐个方向读：**DP** 不减少每块 GPU 的任何字节（训练状态 {dp_state:.1f} GB、激活 {dp_act:.1f} GB 都和 1 块 GPU 时一样），只多了 {dp_dp:.1f} GB 的梯度 all-reduce；ZeRO-1 把优化器状态切开后降到 {zero_state:.1f} GB。**TP**（带 SP）把训练状态和激活都除以约 {t}（{tp_state:.1f} GB、{tp_act:.2f} GB），代价是每块 GPU {tp_tp:.0f} GB 的 all-reduce，每层都在关键路径上。**PP** 让中间的 stage 只存 $L/p$ 层的训练状态（$p={p}$ 时 {pp_mid:.1f} GB；首尾的 stage 还多扛 embedding 和 lm_head，最多的是 {pp_state:.1f} GB），但 1F1B 的 rank 0 仍然存着 {pp_act:.1f} GB 激活，是不切时的 {pp_share:.0%}：它同时有 $p$ 个 micro-batch，每个过 $L/p$ 层，合起来正好是整个模型对一个 micro-batch 的激活（$p$ 取 2..16、$m$ 取 $p..3p$、序列长、TP 和激活重计算随机的 {checked} 个点上逐字节相等）；流量只有 {pp_pp:.2f} GB。想用 PP 省激活，要靠调度（第 5、6 章的 V-Min、V-Half）或者激活重计算，而不是靠多切几段。
# ~~ en fc2bfa46
# One axis at a time. **DP** removes no byte from any GPU (the training state, {dp_state:.1f} GB, and the activations, {dp_act:.1f} GB, are the same as on one GPU) and adds {dp_dp:.1f} GB of gradient all-reduce; with ZeRO-1 sharding the optimizer states the state drops to {zero_state:.1f} GB. **TP** (with SP) divides both the training state and the activations by about {t} ({tp_state:.1f} GB and {tp_act:.2f} GB) at the price of {tp_tp:.0f} GB of all-reduce per GPU, on the critical path in every layer. **PP** leaves a middle stage the training state of $L/p$ layers only ({pp_mid:.1f} GB at $p={p}$; the end stages also carry the embedding and lm_head, the most being {pp_state:.1f} GB), but 1F1B's rank 0 still keeps {pp_act:.1f} GB of activations, {pp_share:.0%} of what one GPU keeps: it holds $p$ micro-batches at once, each through $L/p$ layers, together exactly one whole model's activations for one micro-batch (equal to the byte at {checked} points with $p$ in 2..16, $m$ in $p..3p$ and random sequence length, TP and recomputation); its traffic is only {pp_pp:.2f} GB. To save activations with PP you need the schedule (chapters 5 and 6: V-Min, V-Half) or activation recomputation, not more stages.

# %%
G_F, SEQ_F = 32, 4096
ledger = {}
for tp, pp, dp, zero in ((1, 1, 1, 0), (1, 1, 8, 0), (1, 1, 8, 1), (8, 1, 1, 0), (1, 8, 1, 0), (2, 2, 2, 0)):
    m = G_F // dp
    cfg_f = ActivationConfig(seq=SEQ_F, mbs=1, tp=tp, sp=tp > 1, recompute="selective")
    one_f_one_b = build("1f1b", pp, m)
    mem = pipeline_memory(one_f_one_b, LLAMA8, cfg_f, dp=dp, zero=zero)
    sent = step_traffic(one_f_one_b, LLAMA8, cfg_f, dp)
    ledger[tp, pp, dp, zero] = {"m": m, "state": max(r.static for r in mem.ranks) / GB,
                                "least_state_bytes": min(r.static for r in mem.ranks),
                                "act": max(r.activations for r in mem.ranks) / GB,
                                **{k: max(x[k] for x in sent) / GB for k in ("tp", "pp", "dp")}}
md("\n".join([text("ledger-head")] + [
    f"| {t} × {p} × {d} | {'✓' if z else ''} | {x['m']} | {x['state']:.1f} | {x['act']:.2f} | {x['tp']:.1f} | "
    f"{x['pp']:.2f} | {x['dp']:.1f} |" for (t, p, d, z), x in ledger.items()]))
one, dp8, zero8, tp8, pp8 = (ledger[k] for k in ((1, 1, 1, 0), (1, 1, 8, 0), (1, 1, 8, 1), (8, 1, 1, 0), (1, 8, 1, 0)))


def rank0_keeps_one_model(p, k, seq, tp, recompute):
    """1F1B's rank 0 holds exactly L layers' activations of one micro-batch (plus the embedding's), for any p."""
    cfg = ActivationConfig(seq=seq, mbs=1, tp=tp, sp=tp > 1, recompute=recompute)
    held = pipeline_memory(build("1f1b", p, k * p), LLAMA8, cfg).ranks[0].activations
    return held == LLAMA8.layers * layer_activation_bytes(LLAMA8, cfg) + embedding_activation_bytes(LLAMA8, cfg)


swept_ledger = sweep(rank0_keeps_one_model, {"p": [2, 4, 8, 16], "k": (1, 3), "seq": [1024, 2048, 4096, 8192],
                                             "tp": [1, 2, 4, 8], "recompute": ["none", "selective", "full"]}, 24, seed=8)
md(claim(dp8["state"] == one["state"] and dp8["act"] == one["act"] and zero8["state"] < one["state"] / 2
         and tp8["state"] < one["state"] / 7 and tp8["act"] < one["act"] / 7
         and pp8["least_state_bytes"] == LLAMA8.layers // 8 * layer_state and pp8["state"] < one["state"] / 4
         and pp8["act"] > 0.8 * one["act"] and tp8["tp"] > 50 * pp8["pp"] and swept_ledger.holds,
         text("ledger-read", dp_state=dp8["state"], dp_act=dp8["act"], dp_dp=dp8["dp"], zero_state=zero8["state"],
              t=8, tp_state=tp8["state"], tp_act=tp8["act"], tp_tp=tp8["tp"], p=8, pp_mid=pp8["least_state_bytes"] / GB,
              pp_state=pp8["state"],
              pp_act=pp8["act"], pp_share=pp8["act"] / one["act"], pp_pp=pp8["pp"],
              checked=swept_ledger.checked), ledger=ledger, **swept_ledger.figures()))

# %% [markdown] summary
# ~~ zh f5615b14
# ## 怎么讲清楚
#
# - **读 trace**：先看梯度对不对。空闲的位置（head / gaps / tail）说明不了原因：理想的 1F1B 里 rank 0 的 bubble 全在 gaps 里。用 trace 里量到的操作时长把同一个 plan 重放一遍、再用平均时长重放一遍（`course.attribution.attribute`），空闲就拆成调度本身的 bubble（增大 $m$、换调度）、不均衡（重新切层）和通信/开销（重叠通信、减少跨节点边界），三者相加正好是实测的空闲。
# - **量延迟**：用同一个 rank 时钟上的往返来量，不要跨进程相减时间戳；得到的是延迟加计时误差的上界，先和操作自身的抖动比一比，再决定它能说明什么。
# - **显存**：峰值在哪个 rank 取决于调度（1F1B 在 rank 0，GPipe、ZB-H1 各 rank 一样）；大词表的模型里首尾两个 stage 还扛着 embedding、lm_head 和 logits，Llama 3 的办法是首尾各少一层。
# - **找 hang**：先让它超时报错，再拿到每个 rank 停在哪一步、在等哪条消息，对着 plan 的依赖找环，或者找那个已经做完的 rank。阻塞的 send 是最常见的环；plan 自己排错的环，模拟器在启动进程前就能发现。
# - **3D 并行**：TP 通信最重、放节点内；PP 只传激活（开 TP 时每个 GPU 只传 $1/t$）、可以跨节点，但不减少 1F1B 的 rank 0 的激活；DP 在最外层，不减少任何一块 GPU 的字节（ZeRO 才减）。$G = d\cdot m\cdot b$ 把三者连在一起：DP 越宽，$m$ 越小，bubble 越大。哪种布局最快，取决于通信怎么算：只算计算时不切流水线排第一，算上通信就不一定。
# ~~ en bbfbbbcd
# ## How to explain it
#
# - **Reading a trace**: check the gradients first. Where the idle time sits (head / gaps / tail) does not tell its cause: in the ideal 1F1B, rank 0's whole bubble is in the gaps. Replay the same plan with the trace's measured op lengths and again with mean lengths (`course.attribution.attribute`), and the idle time splits into the schedule's own bubble (raise $m$, change the schedule), imbalance (cut the layers differently) and communication and overhead (overlap communication, fewer cross-node boundaries), adding up to exactly the measured idle time.
# - **Measuring latency**: time a round trip on one rank's clock, never subtract two processes' timestamps. What you get is an upper bound, latency plus timer error; compare it with the ops' own jitter before deciding what it shows.
# - **Memory**: which rank peaks depends on the schedule (rank 0 for 1F1B, every rank alike for GPipe and ZB-H1); with a large vocabulary the end stages also carry the embedding, lm_head and the logits, and Llama 3's remedy is one layer fewer at both ends.
# - **Finding a hang**: make it time out, then get every rank's step and the message it waits for, and look for the cycle against the plan's dependencies, or for the rank that has already finished. Blocking sends are the most common cycle; a cycle in the plan itself the simulator finds before any process starts.
# - **3D parallelism**: TP communicates the most and stays inside a node; PP sends only activations (with TP, $1/t$ per GPU) and can cross nodes, but does not shrink 1F1B's rank-0 activations; DP goes outermost and removes no byte from any GPU (ZeRO does). $G = d\cdot m\cdot b$ ties the three together: the wider DP, the smaller $m$, the larger the bubble. Which layout is fastest depends on how communication is counted: on compute alone no pipeline comes first, with communication not necessarily.

# %% [text] summary-torch-bug
# ~~ zh 9f5d5415
# - **对上 torch**：F→F，B→B（完整反向）或 I（输入梯度），W→W，stage 取路线上的位置。框架打印的调度表也要 validate（这台机器上 torch 打印的 `Schedule1F1B` 有一个错位的显示 bug），最后以实测 trace 为准。
# ~~ en 3c37a218
# - **Matching torch**: F→F, B→B (full backward) or I (input gradient), W→W, and the stage is the position along the route. Validate the schedule tables a framework prints as well (the `Schedule1F1B` printed by this machine's torch has an off-by-one display bug), and trust the measured trace in the end.

# %% [text] summary-torch
# ~~ zh 111a9010
# - **对上 torch**：F→F，B→B（完整反向）或 I（输入梯度），W→W，stage 取路线上的位置。框架打印的调度表也要 validate，最后以实测 trace 为准。
# ~~ en d27f7473
# - **Matching torch**: F→F, B→B (full backward) or I (input gradient), W→W, and the stage is the position along the route. Validate the schedule tables a framework prints as well, and trust the measured trace in the end.

# %% [text] summary-clinic
# ~~ zh 26d9353f
# - **门诊**：$m<p$ 能跑但 bubble 是 {few:.0%}；最后一个 micro-batch 不满时按整个 batch 的 token 数归一化；梯度加起来而不是平均会让 SGD 的步长变成 $m$ 倍，Adam 却看不出来；标签要按 micro-batch 编号取，DualPipe 里按顺序取会配错 {bad} 个；embedding 单独一段只省下它自己那 {emb:.1f} GB 状态、还要多一块 GPU。
# ~~ en c99b0bcb
# - **The clinic**: $m<p$ runs, with a {few:.0%} bubble; with a last micro-batch that is not full, normalise by the whole batch's token count; summing the gradients instead of averaging makes SGD's step $m$ times larger while Adam does not show it; take labels by micro-batch number, since taking them in order mismatches {bad} in DualPipe; the embedding on its own stage saves only its own {emb:.1f} GB of state, at the cost of one more GPU.

# %%
md(claim(printed_off_by_one, text("summary-torch-bug"), otherwise=text("summary-torch"))
   + "\n" + text("summary-clinic", few=few.bubble_ratio, bad=bad["dualpipe"], emb=emb_state / 1e9))

# %% [markdown] exercises
# ~~ zh 2fad3377
# ## 练习
#
# - `trace-attribution`（★★☆）：把 trace 里的不均衡再拆成两份：stage 之间的差别（重新切层能省）和 micro-batch 之间的差别（重排、拼接能省）。
# - `torch-actions`（★★☆）：课程的 plan 和 torch 的 action 字符串双向互译，F&B 重叠的一对也要对上；再把收发动作也写出来，让 torch 不用自己补。
# - `activation-bytes`（★★★）：从一层 transformer 的结构数出它为反向存的字节数（GPT 和 Llama 3 的一层，任意 MLP 宽度和元素字节数，TP、SP、激活重计算）。
# - `layout-chooser`（★★★）：给一个模型、一批 GPU、全局 batch 和两个带宽，选出放得下又最快的 tp × pp × dp、调度、$m$ 和激活重计算方式。
#
# ```bash
# python practice/judge.py start trace-attribution
# python practice/judge.py start torch-actions
# python practice/judge.py start activation-bytes
# python practice/judge.py start layout-chooser
# ```
# ~~ en c57bbf43
# ## Exercises
#
# - `trace-attribution` (★★☆): split a trace's imbalance further into the part the stages' differences cause (a new partition removes it) and the part the micro-batches' differences cause (reordering or packing removes it).
# - `torch-actions` (★★☆): translate between the course's plans and torch's action strings in both directions, overlapped F&B pairs included; then write the send and receive actions as well, so torch need not add them.
# - `activation-bytes` (★★★): count, from the structure of one transformer layer, the bytes it keeps for the backward (a GPT and a Llama 3 layer, any MLP width and element size, TP, SP, activation recomputation).
# - `layout-chooser` (★★★): given a model, some GPUs, a global batch and two bandwidths, choose the fastest tp × pp × dp, schedule, $m$ and recomputation that fits.
#
# ```bash
# python practice/judge.py start trace-attribution
# python practice/judge.py start torch-actions
# python practice/judge.py start activation-bytes
# python practice/judge.py start layout-chooser
# ```
