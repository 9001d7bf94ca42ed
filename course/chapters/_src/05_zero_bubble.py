# %% [markdown] intro
# ~~ zh f4b0490b
# # 第 5 章　零 bubble：把反向拆成 B 和 W
#
# 1F1B 和交错调度都把"反向"当成一个整体。Zero Bubble（Qi et al., 2023）注意到反向里有两件事：
# 对输入的梯度（上一个 rank 正等着它）和对权重的梯度（谁也不等它，只要在优化器更新之前算完）。
# 把后者拆出来、挪到原本空闲的地方，bubble 就能被填上。本章先手算一个 Linear 的两种梯度，再看 ZB-H1、ZB-H2 的时间线和显存，
# 然后认真回答"零"到底指什么，在多进程上真跑 ZB-H1；接着换一个角度，把显存当成可以设计的量（V-Min、V-Half、V-ZB），
# 最后让程序在显存上限下搜索调度。术语和记号见[术语表](glossary.md)。
#
# **在浏览器里（浏览器版）：** 第 1 节的 autograd 和第 5 节的多进程真跑显示录制的结果（会注明，并给出重跑的命令）；第 7 节里 CP-SAT 的证明需要 OR-Tools，只有桌面版能跑，浏览器里显示启发式的计划和它证明的下界。
#
# ## 自测
#
# 1. 对 $Y = XW$，写出 $\partial L/\partial X$ 和 $\partial L/\partial W$。各自需要哪些张量？
# 2. 为什么 B（输入梯度）必须尽快算，而 W（权重梯度）可以延后？延后 W 的代价是什么？
# 3. ZB-H1 的激活峰值和 1F1B 比如何？ZB-H2 呢？
# 4. ZB-H2 每个 rank 的窗口内都没有空闲，为什么一次迭代的 makespan 仍然大于 $m(F+B+W)$？
# 5. "post-validation"（事后校验）解决的是什么问题？没有它，ZB-H2 的优势还剩多少？
# 6. 一个 micro-batch 的激活在某个 rank 上从它的 F 开始、到最后一个还要用它的算子结束，共活 $l$（lifespan）；每隔 $T$ 进来一个新的 micro-batch。稳定阶段里这个 rank 同时存着几份激活？
#
# <details><summary>参考答案（先自己答，再展开）</summary>
#
# 1. $\partial L/\partial X = \mathrm{d}Y\,W^\top$，只需要 $\mathrm{d}Y$ 和权重 $W$；$\partial L/\partial W = X^\top \mathrm{d}Y$，
#    需要 $\mathrm{d}Y$ 和前向时存下的输入 $X$（激活）。
# 2. 上一个 rank 的反向要等这个 rank 的 B 才能开始，B 在关键路径上；W 只被本 rank 的优化器用到。延后 W 意味着输入 $X$
#    （以及 $\mathrm{d}Y$）要一直留到 W 算完，激活释放得更晚。
# 3. ZB-H1 的峰值最大值与 1F1B 相同，$p$ 份，预热没有变长；只是 W 推迟后激活释放得晚：1F1B 里 rank $r$ 只到 $p-r$，
#    ZB-H1 里 rank $r$ 到 $(p-r)M_B + r\,M_W$（$M_B$、$M_W$ 见第 1 节末尾），本章默认 $M_W = M_B$ 时每个 rank 都到 $p$。
#    ZB-H2 在预热阶段多做前向来填满开头，峰值最多 $2p-1$ 份。
# 4. 各 rank 的窗口是错开的：rank $r$ 要等 $r$ 个前向才有活干，也就晚 $r$ 个前向结束；rank 0 早早做完，只能等最后一个 rank。
#    "每个 rank 的窗口内没有空闲"不等于"所有 rank 在同一段时间里都在忙"。
# 5. 优化器步通常要全局信息（梯度范数裁剪、NaN/Inf 检查），这会在迭代之间插入一个同步点，下一轮的预热无法填进本轮的收尾。
#    事后校验让各 rank 先乐观地更新、之后再核对（出问题就回滚），去掉了这个同步点，多轮迭代首尾相接，稳定状态下每轮才是
#    $m(F+B+W)$。没有它，每轮都要付一次错开的开头和结尾；但只要 $B > \min(F, W)$（transformer 里 B 比 W 长），ZB-H2
#    即使有同步点也比 ZB-H1 快（第 3 节）。
# 6. 活着的是最近 $l$ 这段时间里进来的那些：$\lfloor l/T \rfloor$ 或 $\lceil l/T \rceil$ 份，峰值约 $\lceil l/T \rceil$。
#    1F1B 的 rank $r$：$l = (p-r)(F+B+W)$、$T = F+B+W$，正好 $p-r$ 份。想省显存，就得缩短 lifespan（第 6 节）。
#
# </details>
# ~~ en 0176e0a2
# # Chapter 5. Zero bubble: splitting the backward into B and W
#
# 1F1B and the interleaved schedules treat "the backward" as one piece. Zero Bubble (Qi et al., 2023) noticed that it does two things:
# it computes the gradient with respect to the input, which the previous rank is waiting for, and the gradient with respect to the weights, which nobody waits for as long as it is ready before the optimizer step.
# Split the second one off, move it into time that would otherwise be idle, and the bubble fills up. This chapter first works out both gradients of a Linear layer by hand, then looks at the timelines and memory of ZB-H1 and ZB-H2,
# asks carefully what "zero" means, and runs ZB-H1 on several processes. It then turns the question around and treats memory as something to design (V-Min, V-Half, V-ZB),
# and ends with a program that searches for schedules under a memory cap. Terms and notation are in the [glossary](../glossary.md).
#
# **In the browser (the browser edition):** section 1's autograd and section 5's multi-process run show recorded results (marked as such, with the command that reruns them); CP-SAT's proofs in section 7 need OR-Tools and run only in the desktop edition, and the browser shows the heuristic's plan with its proven lower bound.
#
# ## Self-test
#
# 1. For $Y = XW$, write down $\partial L/\partial X$ and $\partial L/\partial W$. Which tensors does each one need?
# 2. Why must B (the input gradient) be computed as soon as possible while W (the weight gradient) can wait? What does delaying W cost?
# 3. How does ZB-H1's activation peak compare with 1F1B's? And ZB-H2's?
# 4. ZB-H2 has no idle time inside any rank's window. Why is one iteration's makespan still longer than $m(F+B+W)$?
# 5. What problem does post-validation solve? How much of ZB-H2's advantage is left without it?
# 6. On some rank, a micro-batch's activations live from the start of its F to the end of the last op that still needs them, a time $l$ (the lifespan), and a new micro-batch arrives every $T$. How many micro-batches' activations does the rank hold at once in the steady state?
#
# <details><summary>Answers (try first, then open)</summary>
#
# 1. $\partial L/\partial X = \mathrm{d}Y\,W^\top$ needs only $\mathrm{d}Y$ and the weight $W$; $\partial L/\partial W = X^\top \mathrm{d}Y$
#    needs $\mathrm{d}Y$ and the input $X$ saved in the forward (an activation).
# 2. The previous rank's backward cannot start before this rank's B, so B is on the critical path; W is used only by this rank's optimizer. Delaying W means the input $X$
#    (and $\mathrm{d}Y$) must be kept until W is done: activations are freed later.
# 3. ZB-H1's largest peak equals 1F1B's, $p$ micro-batches, because the warm-up is no longer; only the activations are freed later once W is delayed: in 1F1B rank $r$ peaks at $p-r$,
#    in ZB-H1 at $(p-r)M_B + r\,M_W$ ($M_B$ and $M_W$ are defined at the end of section 1); with this chapter's default $M_W = M_B$ every rank reaches $p$.
#    ZB-H2 runs extra forwards in the warm-up to fill the start, and peaks at up to $2p-1$.
# 4. The ranks' windows are staggered: rank $r$ has nothing to do until $r$ forwards have passed, so it also finishes $r$ forwards later; rank 0 finishes early and waits for the last rank.
#    "No idle time inside each rank's window" is not "every rank busy over the same stretch of time".
# 5. The optimizer step usually needs global information (gradient-norm clipping, NaN/Inf checks), which puts a barrier between iterations: the next iteration's warm-up cannot fill this one's cool-down.
#    Post-validation lets every rank update optimistically and check afterwards (rolling back if needed). The barrier goes away, iterations run back to back, and in the steady state each one takes
#    $m(F+B+W)$. Without it every iteration pays for the staggered start and end; but whenever $B > \min(F, W)$ (in a transformer B is longer than W), ZB-H2
#    is faster than ZB-H1 even with the barrier (section 3).
# 6. The ones alive are those that arrived during the last $l$: $\lfloor l/T \rfloor$ or $\lceil l/T \rceil$ of them, so the peak is about $\lceil l/T \rceil$.
#    In 1F1B rank $r$ has $l = (p-r)(F+B+W)$ and $T = F+B+W$: exactly $p-r$. Saving memory means shortening the lifespan (section 6).
#
# </details>

# %%
from course import figure, formulas, plots, recordings
from course.chapter import md, open_chapter
from course.claims import claim, reveal, sweep
from course.costs import Costs
from course.iterations import simulate_iterations
from course.schedules import build
from course.sim import simulate
from course.sim_compiled import CompiledPlan
from course.widgets import explore

text = open_chapter("05_zero_bubble")
EPS = 1e-9
_compiled = {}


def compiled(name, p, m):
    """A schedule's plan, checked and laid out once: the sweeps below simulate it under many costs."""
    if (name, p, m) not in _compiled:
        _compiled[name, p, m] = CompiledPlan(build(name, p, m))
    return _compiled[name, p, m]


def close(a, b):
    return abs(a - b) <= EPS * max(1.0, abs(b))


def rounded(xs):
    return [round(x, 3) for x in xs]

# %% [markdown] linear-by-hand
# ~~ zh 35eedaa3
# ## 1. 手算一个 Linear 的反向
#
# 设 $Y = XW$，$X$ 是 $n \times d_\text{in}$（一个 micro-batch 的输入），$W$ 是 $d_\text{in} \times d_\text{out}$。
# 按分量写 $Y_{ij} = \sum_k X_{ik} W_{kj}$，链式法则给出
#
# $$\frac{\partial L}{\partial X_{ik}} = \sum_j \mathrm{d}Y_{ij}\, W_{kj} = (\mathrm{d}Y\, W^\top)_{ik},\qquad
#   \frac{\partial L}{\partial W_{kj}} = \sum_i X_{ik}\, \mathrm{d}Y_{ij} = (X^\top \mathrm{d}Y)_{kj}.$$
#
# 形状自己就能检查：$\mathrm{d}Y\,W^\top$ 是 $n \times d_\text{in}$，和 $X$ 一样；$X^\top \mathrm{d}Y$ 是
# $d_\text{in} \times d_\text{out}$，和 $W$ 一样。用 autograd 核对（float64，误差应在舍入级别）：
# ~~ en d055dd8b
# ## 1. A Linear layer's backward by hand
#
# Let $Y = XW$ with $X$ of shape $n \times d_\text{in}$ (one micro-batch's input) and $W$ of shape $d_\text{in} \times d_\text{out}$.
# Component by component, $Y_{ij} = \sum_k X_{ik} W_{kj}$, and the chain rule gives
#
# $$\frac{\partial L}{\partial X_{ik}} = \sum_j \mathrm{d}Y_{ij}\, W_{kj} = (\mathrm{d}Y\, W^\top)_{ik},\qquad
#   \frac{\partial L}{\partial W_{kj}} = \sum_i X_{ik}\, \mathrm{d}Y_{ij} = (X^\top \mathrm{d}Y)_{kj}.$$
#
# The shapes check themselves: $\mathrm{d}Y\,W^\top$ is $n \times d_\text{in}$, like $X$; $X^\top \mathrm{d}Y$ is
# $d_\text{in} \times d_\text{out}$, like $W$. Compare with autograd (float64, so the differences should be at rounding level):

# %% [text] linear-check
# ~~ zh a46cc03d
# dX：形状 {dx_shape}，与 autograd 的最大差 {err_dx:.1e}；dW：形状 {dw_shape}，最大差 {err_dw:.1e}。
# ~~ en bca10472
# dX: shape {dx_shape}, largest difference from autograd {err_dx:.1e}; dW: shape {dw_shape}, largest difference {err_dw:.1e}.

# %%
# torch's autograd runs live where torch is installed; without torch (the browser edition) this is the recorded run.
md(f"```python\n{recordings.source('linear-backward')}```")
lin = recordings.run("linear-backward")
err_dx, err_dw = lin["err_dx"], lin["err_dw"]
md(text("linear-check", dx_shape=tuple(lin["dx_shape"]), err_dx=err_dx, dw_shape=tuple(lin["dw_shape"]), err_dw=err_dw))
assert err_dx < 1e-12 and err_dw < 1e-12

# %% [markdown] motivation
# ~~ zh 3f2bb342
# 两个式子透露了零 bubble 的全部动机：
#
# - **B = dY·Wᵀ** 只要 $\mathrm{d}Y$ 和权重，算完立刻发给上一个 rank：它在关键路径上；
# - **W = Xᵀ·dY** 要用到前向存下的 $X$，但结果只有本 rank 的优化器会用，可以晚一点算；代价是 $X$ 要多存一会儿。
#
# （`torch.nn.Linear` 存的是 $W^\top$，公式里的 $W$ 换成 `weight.T` 即可。）
#
# 对一整个 stage（几层叠起来）也一样：`torch.autograd.grad` 先只对 stage 的输入求导（B），留着计算图，
# 之后再对参数求导（W）。两步加起来和一次完整的 `backward()` 相同：
# ~~ en 9b12cbb2
# The two formulas hold the whole motivation for zero bubble:
#
# - **B = dY·Wᵀ** needs only $\mathrm{d}Y$ and the weight, and goes to the previous rank as soon as it is done: it is on the critical path;
# - **W = Xᵀ·dY** needs the $X$ saved in the forward, but only this rank's optimizer uses the result, so it can be computed later; the price is keeping $X$ a while longer.
#
# (`torch.nn.Linear` stores $W^\top$: replace $W$ in the formulas by `weight.T`.)
#
# The same holds for a whole stage of several layers: `torch.autograd.grad` first differentiates with respect to the stage's input only (B), keeping the graph,
# and later with respect to the parameters (W). The two steps together equal one full `backward()`:

# %% [text] split-check
# ~~ zh c4b6b446
# B 再加 W 与完整反向的最大差：{err:.1e}（{n} 个参数张量）。
# ~~ en 610e3860
# Largest difference between B followed by W and the full backward: {err:.1e} ({n} parameter tensors).

# %%
md(f"```python\n{recordings.source('split-backward')}```")
split = recordings.run("split-backward")
err_split = split["err"]
md(text("split-check", err=err_split, n=split["tensors"]))
assert err_split < 1e-12

# %% [markdown] split-cost
# ~~ zh b37332d7
# 这样写直观但不省：第二次 `autograd.grad` 会重新沿图走一遍、再算一次中间层的输入梯度。
# 正式实现（Zero Bubble 论文的代码、`torch.distributed.pipelining` 的 `stage_backward_weight`）在 B 时把每层的 $\mathrm{d}Y$
# 留下，W 时直接做 $X^\top \mathrm{d}Y$。本课程的 `course.live` 也是这样：B 一次对 stage 输入和每个 Linear 的输出求导并留下后者，
# W 时每个 Linear 只做一次小的乘法。
#
# **B 之后还要留多少激活，是一个建模假设。** Zero Bubble 论文分开记两个量：$M_B$，一个 micro-batch 在一个 stage 上
# B 要用到的全部激活；$M_W$，B 做完之后、W 做完之前还占着的那部分（每个 Linear 的输入 $X$ 和输出梯度 $\mathrm{d}Y$），
# $M_W < M_B$。本库用 `Costs.w_mem` $= M_W / M_B$ 表示：F 分配 1 份，B 释放 $1 - $ `w_mem`，W 释放剩下的 `w_mem`。
# 默认值从对象里读出来：
# ~~ en 7ba368f2
# Written this way the split is clear but not cheap: the second `autograd.grad` walks the graph again and recomputes the input gradients of the inner layers.
# Real implementations (the Zero Bubble paper's code, `stage_backward_weight` in `torch.distributed.pipelining`) keep each layer's $\mathrm{d}Y$ during B
# and compute $X^\top \mathrm{d}Y$ directly in W. The course's `course.live` does the same: B differentiates with respect to the stage input and to every Linear's output in one pass and keeps the latter,
# so W is one small product per Linear.
#
# **How much of the activations stays after B is a modelling assumption.** The Zero Bubble paper counts two quantities: $M_B$, all the activations B needs for one micro-batch on one stage;
# and $M_W$, the part still held after B and until W (each Linear's input $X$ and output gradient $\mathrm{d}Y$),
# with $M_W < M_B$. The library writes this as `Costs.w_mem` $= M_W / M_B$: F allocates 1 unit, B frees $1 - $ `w_mem`, W frees the remaining `w_mem`.
# Read the defaults from the object:

# %% [text] defaults
# ~~ zh 4db3b71e
# `Costs()` 的默认值：F = {f:g}、b = {b:g}、w = {w:g}（完整反向 b + w = {full:g}），`w_mem` = {w_mem:g}。
# ~~ en 7b88a648
# The defaults of `Costs()`: F = {f:g}, b = {b:g}, w = {w:g} (a full backward b + w = {full:g}), `w_mem` = {w_mem:g}.

# %% [text] w-mem-one
# ~~ zh e25016e9
# 默认 `w_mem` = 1 是最保守的记法：B 之后一份激活都不释放，全部留到 W。本章按 micro-batch 计数时都用这个默认值；用到别的值的地方（第 2 节的预测、第 2.1 节算出的真实比例、第 6、7 节）会写出来。
# ~~ en d580c305
# The default `w_mem` = 1 is the most conservative choice: B frees nothing, everything is held until W. This chapter uses it whenever it counts in micro-batches; wherever it uses another value (the prediction in section 2, the real ratio computed in section 2.1, sections 6 and 7) it says so.

# %% [text] w-mem-other
# ~~ zh 60af0608
# 默认 `w_mem` 不是 1：B 之后还留 {w_mem:g} 份，到 W 才全部释放。
# ~~ en 89e785e4
# The default `w_mem` is not 1: {w_mem:g} of a micro-batch's activations stay after B and are freed only by W.

# %%
defaults = Costs()
md(text("defaults", f=defaults.f, b=defaults.b, w=defaults.w, full=defaults.b + defaults.w, w_mem=defaults.w_mem)
   + " " + claim(defaults.w_mem == 1.0, text("w-mem-one"), otherwise=text("w-mem-other", w_mem=defaults.w_mem),
                 w_mem=defaults.w_mem))

# %% [markdown] plans
# ~~ zh af3d072a
# ## 2. 计划里的 B 和 W
#
# 在本库的 `Plan` 里，只要出现 `W` 算子，`B` 就只表示输入梯度；没有 `W` 时 `B` 是完整反向。
# 下面比较三张计划：1F1B（完整反向）、ZB-H1、ZB-H2，代价取 $F = B = W$（Zero Bubble 论文的设定）。
# ~~ en ce165311
# ## 2. B and W in a plan
#
# In the library's `Plan`, as soon as `W` ops appear, `B` means the input gradient only; without `W` ops `B` is the full backward.
# Below we compare three plans: 1F1B (full backward), ZB-H1 and ZB-H2, with $F = B = W$ (the Zero Bubble paper's setting).

# %% [markdown] predict-h1-idle
# ~~ zh a76f7215
# **预测：** 1F1B 的 rank 0 在一次迭代里空闲 $(p-1)(F+B+W)$。ZB-H1 把 W 推迟到排空阶段，在 $p=4$、$m=8$、$F=B=W=1$ 时，
# rank 0 的窗口内还剩多少空闲？把数字写进下一格的 `guess_h1_idle`。
# ~~ en dadb136b
# **Predict:** 1F1B's rank 0 is idle for $(p-1)(F+B+W)$ in one iteration. ZB-H1 delays W into the drain. With $p=4$, $m=8$ and $F=B=W=1$,
# how much idle time is left inside rank 0's window? Write the number into `guess_h1_idle` in the next cell.

# %%
guess_h1_idle = None    # a number, e.g. 3

# %% [markdown] read-rank0
# ~~ zh 383ef414
# 下一格打印三张计划里 rank 0 的顺序，并画出时间线和激活。读图时盯住 rank 0：1F1B 的 rank 0 在最后要等所有反向回流；
# ZB-H1 在这段时间里做攒下的 W；ZB-H2 在开头就多做几个前向，让后面每个空隙都有 W 可填。
# ~~ en 60d204c8
# The next cell prints rank 0's order in each of the three plans and draws their timelines and activations. Watch rank 0: in 1F1B it waits at the end for every backward to come back;
# ZB-H1 spends that time on the W's it saved up; ZB-H2 runs a few extra forwards at the start so that every later gap has a W to fill it.

# %%
p, m = 4, 8
costs = Costs(f=1, b=1, w=1)
plans = {name: build(name, p, m) for name in ("1f1b", "zb-h1", "zb-h2")}
tls = {name: simulate(plan, costs) for name, plan in plans.items()}
for name, plan in plans.items():
    print(f"{name:6s} rank 0: {' '.join(plan.rank_tokens(0))}")
fig = plots.compare(list(tls.values()), memory_too=True)
figure.show()

# %% [text] plans-table
# ~~ zh 80d9fef2
# $p={p}, m={m}, F=B=W={f:g}$：
#
# | 调度 | makespan | 每个 rank 的空闲 | 闭式解（rank 0） | 每个 rank 的激活峰值 |
# |---|---|---|---|---|
# ~~ en 113eae1a
# $p={p}, m={m}, F=B=W={f:g}$:
#
# | schedule | makespan | idle per rank | closed form (rank 0) | peak activations per rank |
# |---|---|---|---|---|

# %% [text] plans-1f1b
# ~~ zh adfe1e32
# - **1F1B**：rank 0 空闲 {idle:g} $=(p-1)(F+B+W)$，完整反向不可拆，灌满和排空都是空等。
# ~~ en 16e006c5
# - **1F1B**: rank 0 is idle for {idle:g} $=(p-1)(F+B+W)$; the full backward cannot be split, so the fill and the drain are pure waiting.

# %% [text] plans-h1
# ~~ zh be9547ea
# - **ZB-H1**：rank 0 空闲降到 {idle:g} $=(p-1)(F+B-W)$，makespan 从 {ms_1f1b:g} 降到 {ms_h1:g}。
# ~~ en 31efb146
# - **ZB-H1**: rank 0's idle time falls to {idle:g} $=(p-1)(F+B-W)$ and the makespan from {ms_1f1b:g} to {ms_h1:g}.

# %% [text] plans-h1-peak
# ~~ zh 4617583a
# 激活峰值的最大值 {h1:g}，和 1F1B 的 {base:g} 一样，预热没有变长。
# ~~ en 07e368af
# Its largest activation peak is {h1:g}, the same as 1F1B's {base:g}: the warm-up is no longer.

# %% [text] plans-h1-ranks
# ~~ zh 6f712600
# 不过 1F1B 的 rank $r$ 只到 $p-r$（{base}），ZB-H1 推迟了 W，各 rank 的峰值是 {h1}：按默认的 `w_mem` = {w_mem:g}，激活要等 W 做完才释放。
# ~~ en 5381b2bb
# But in 1F1B rank $r$ only reaches $p-r$ ({base}); ZB-H1 delays W, and its ranks peak at {h1}: with the default `w_mem` = {w_mem:g}, activations are freed only once W is done.

# %% [text] plans-h2
# ~~ zh 1f1f0a3c
# - **ZB-H2**：每个 rank 窗口内的最大空闲是 {idle:g}，
# ~~ en 2e7cf818
# - **ZB-H2**: the largest idle time inside any rank's window is {idle:g};

# %% [text] plans-h2-zero
# ~~ zh 8c8c6df9
# $(p-1)(F+B-2W)$ 在 $F=B=W$ 时正好为零；
# ~~ en 5497cf84
# $(p-1)(F+B-2W)$ is exactly zero when $F=B=W$.

# %% [text] plans-h2-peak
# ~~ zh 98b11c05
# 代价是预热阶段多做前向，rank 0 的激活峰值到 {peak:g}，正是上限 $2p-1 = {cap}$。这个上限对任何 $p$、$m$ 和 `w_mem` 都成立：检查了 {checked} 个点（$p$ 取 2..8，$m$ 取 $2p-1$..$2p+11$，`w_mem` 取 0..1），没有一个 rank 超过 $2p-1$。
# ~~ en 7ac6aad5
# The price is the extra forwards of the warm-up: rank 0's activations peak at {peak:g}, exactly the limit $2p-1 = {cap}$. That limit holds for every $p$, $m$ and `w_mem` we tried: {checked} points checked ($p$ from 2 to 8, $m$ from $2p-1$ to $2p+11$, `w_mem` from 0 to 1), and no rank ever exceeds $2p-1$.

# %%
F, B, Wt = costs.f, costs.b, costs.w
closed = {name: formulas.predict(name, p, m, costs).idle[0] for name in plans}   # the library's closed forms
rows = [f"| {name} | {tl.makespan:g} | {rounded(tl.idle)} | {closed[name]:g} | {rounded(tl.peak_activations)} |"
        for name, tl in tls.items()]
md(text("plans-table", p=p, m=m, f=F) + "\n" + "\n".join(rows))
idle0 = {name: tl.idle[0] for name, tl in tls.items()}
peaks = {name: tl.peak_activations for name, tl in tls.items()}
assert abs(idle0["1f1b"] - (p - 1) * (F + B + Wt)) < EPS and abs(idle0["zb-h1"] - (p - 1) * (F + B - Wt)) < EPS


def h2_peak_rule(p, extra, w_mem):
    """ZB-H2 never holds more than 2p-1 micro-batches on any rank."""
    got = compiled("zb-h2", p, 2 * p - 1 + extra).simulate(Costs(w_mem=w_mem)).peak_activations
    return max(got) <= 2 * p - 1 + EPS


h2_peak_sweep = sweep(h2_peak_rule, {"p": (2, 8), "extra": (0, 12), "w_mem": (0.0, 1.0)}, n=60, seed=1)
md(text("plans-1f1b", idle=idle0["1f1b"]) + "\n"
   + text("plans-h1", idle=idle0["zb-h1"], ms_1f1b=tls["1f1b"].makespan, ms_h1=tls["zb-h1"].makespan) + " "
   + claim(max(peaks["zb-h1"]) == max(peaks["1f1b"]),
           text("plans-h1-peak", h1=max(peaks["zb-h1"]), base=max(peaks["1f1b"])),
           zb_h1=peaks["zb-h1"], one_f_one_b=peaks["1f1b"]) + " "
   + text("plans-h1-ranks", base=rounded(peaks["1f1b"]), h1=rounded(peaks["zb-h1"]), w_mem=costs.w_mem) + "\n"
   + text("plans-h2", idle=max(tls["zb-h2"].idle)) + " "
   + claim(max(tls["zb-h2"].idle) < EPS and F + B - 2 * Wt <= EPS, text("plans-h2-zero"), idle=tls["zb-h2"].idle)
   + " " + claim(h2_peak_sweep.holds and peaks["zb-h2"][0] == 2 * p - 1,
                 text("plans-h2-peak", peak=peaks["zb-h2"][0], cap=2 * p - 1, checked=h2_peak_sweep.checked),
                 **h2_peak_sweep.figures()))

# %% [text] reveal-h1-idle
# ~~ zh a9a85895
# ZB-H1 的 rank 0 在排空阶段用攒下的 W 填空隙，每一段空等少了一个 W：$(p-1)(F+B-W) = {idle:g}$，1F1B 是 {base:g}。
# ~~ en eef78bd1
# In the drain, ZB-H1's rank 0 fills its gaps with the W's it saved up, so each wait is one W shorter: $(p-1)(F+B-W) = {idle:g}$, against 1F1B's {base:g}.

# %%
md(reveal(guess_h1_idle, idle0["zb-h1"], text("reveal-h1-idle", idle=idle0["zb-h1"], base=idle0["1f1b"])))

# %% [markdown] predict-h1-peaks
# ~~ zh c4f053a9
# **预测：** 如果一个待做的 W 只占着一半的激活（`w_mem` = 0.5，即 $M_W = M_B/2$），ZB-H1 各 rank 的激活峰值是多少？
# 写成一个列表，rank 0 在前。
# ~~ en 44691a44
# **Predict:** if a pending W holds only half of the activations (`w_mem` = 0.5, that is $M_W = M_B/2$), what are ZB-H1's activation peaks per rank?
# Write a list, rank 0 first.

# %%
guess_h1_peaks = None   # a list of p numbers, e.g. [4, 4, 4, 4]

# %% [text] reveal-h1-peaks
# ~~ zh 01046ecb
# rank $r$ 在稳定阶段同时有 $p-r$ 个 micro-batch 做完了 F 还没做 B（各占 1 份），外加 $r$ 个待做的 W（各占 `w_mem` = {w_mem:g} 份）：峰值 $(p-r) + r\cdot$`w_mem`，即 $(p-r)M_B + r\,M_W$。`w_mem` = 1 时每个 rank 都是 $p$，`w_mem` = 0 时退回 1F1B 的 $p-r$。这条规则逐个 rank 检查了 {checked} 个点（$p$ 取 2..8，$m$ 取 $p$..$p+12$，`w_mem` 取 0..1），都成立。
# ~~ en 8974fb0d
# In the steady state rank $r$ holds $p-r$ micro-batches that have done F but not yet B (1 unit each), plus $r$ pending W's (`w_mem` = {w_mem:g} each): a peak of $(p-r) + r\cdot$`w_mem`, that is $(p-r)M_B + r\,M_W$. With `w_mem` = 1 every rank reaches $p$; with `w_mem` = 0 we are back at 1F1B's $p-r$. The rule was checked rank by rank at {checked} points ($p$ from 2 to 8, $m$ from $p$ to $p+12$, `w_mem` from 0 to 1) and held at every one.

# %%
half = Costs(f=1, b=1, w=1, w_mem=0.5)
peaks_half = simulate(plans["zb-h1"], half).peak_activations


def h1_peaks_rule(p, extra, w_mem):
    """ZB-H1's rank r peaks at (p - r) + r * w_mem."""
    got = compiled("zb-h1", p, p + extra).simulate(Costs(w_mem=w_mem)).peak_activations
    return all(close(x, (p - r) + r * w_mem) for r, x in enumerate(got))


h1_peak_sweep = sweep(h1_peaks_rule, {"p": (2, 8), "extra": (0, 12), "w_mem": (0.0, 1.0)}, n=60, seed=2)
md(reveal(guess_h1_peaks, rounded(peaks_half),
          claim(h1_peak_sweep.holds and all(close(x, (p - r) + r * half.w_mem) for r, x in enumerate(peaks_half)),
                text("reveal-h1-peaks", w_mem=half.w_mem, checked=h1_peak_sweep.checked),
                peaks=peaks_half, **h1_peak_sweep.figures())))

# %% [markdown] bytes
# ~~ zh 0e2134ae
# ### 2.1 以字节计：B 和 W 各留下什么
#
# `w_mem` 不必拍脑袋。W 算的是每个 Linear 的 $\mathrm{d}W = X^\top \mathrm{d}Y$：它只要这个 Linear 的输入 $X$（F 时就存下了）和输出梯度 $\mathrm{d}Y$（B 算出来的）。softmax 的输出、LayerNorm 的输入、GeLU 的输入这些，B 用完就可以释放。`course.memory.layer_terms` 把一层为反向保存的张量逐项列出，`w_mem_share` 按上面的规则算出 $M_W / M_B$。下面是 GPT-3 175B 的一层（$s=2048$、$b=1$，先不并行，与 Zero Bubble 论文的记法一致）：
# ~~ en 87bd10a7
# ### 2.1 In bytes: what B and W each keep
#
# `w_mem` need not be a guess. W computes each Linear's $\mathrm{d}W = X^\top \mathrm{d}Y$: it needs only that Linear's input $X$ (saved in F) and its output gradient $\mathrm{d}Y$ (produced by B). The softmax output, the LayerNorm inputs, the GeLU input and the like can be freed once B is done. `course.memory.layer_terms` lists, tensor by tensor, what one layer keeps for its backward, and `w_mem_share` computes $M_W / M_B$ by the rule above. Here is one layer of GPT-3 175B ($s=2048$, $b=1$, no parallelism yet, as in the Zero Bubble paper's notation):

# %% [text] terms-head
# ~~ zh 1905a1ce
# | 为反向保存的张量 | 字节 | W 还要用吗 |
# |---|---|---|
# ~~ en 650634f2
# | tensor kept for the backward | bytes | does W need it? |
# |---|---|---|

# %% [text] w-needs
# ~~ zh e932b6c3
# 要（Linear 的输入）
# ~~ en 601ed363
# yes (a Linear's input)

# %% [text] w-free
# ~~ zh 77af2f33
# 不要
# ~~ en 9390298f
# no

# %% [text] bytes-mb-mw
# ~~ zh 492ac123
# 加起来 $M_B$ = {mb:g} sbh = {mb_gb:.2f} GB，正是 $sbh(34 + 5as/h)$；W 要的是四个 Linear 的输入（共 14 sbh）加上它们的输出梯度（18 sbh），$M_W$ = {mw:g} sbh = {mw_gb:.2f} GB，和 Zero Bubble 论文给的 $32bsh$ 一致。所以 `w_mem` = $M_W/M_B$ ≈ **{share:.2f}**：注意力分数那一大块，B 做完就能放掉。
# ~~ en b12b743f
# Altogether $M_B$ = {mb:g} sbh = {mb_gb:.2f} GB, exactly $sbh(34 + 5as/h)$. W needs the inputs of the four Linears (14 sbh in all) plus their output gradients (18 sbh): $M_W$ = {mw:g} sbh = {mw_gb:.2f} GB, the $32bsh$ the Zero Bubble paper gives. So `w_mem` = $M_W/M_B$ ≈ **{share:.2f}**: the big block of attention scores can go as soon as B is done.

# %%
from course.memory import (
    PRESETS,
    ActivationConfig,
    chunk_times,
    layer_activation_bytes,
    layer_terms,
    pipeline_memory,
    w_mem_share,
)

GPT3 = PRESETS["gpt3-175b"]
plain_cfg = ActivationConfig(seq=2048, mbs=1)
sbh = plain_cfg.seq * plain_cfg.mbs * GPT3.hidden
terms = layer_terms(GPT3, plain_cfg.seq, plain_cfg.mbs)
md(text("terms-head") + "\n"
   + "\n".join(f"| {t.what} | {t.size / sbh:g} sbh | {text('w-needs') if t.linear_input else text('w-free')} |"
               for t in terms))
m_b = layer_activation_bytes(GPT3, plain_cfg)
share = w_mem_share(GPT3, plain_cfg)
m_w = share * m_b
md(claim(round(m_b) == round(sbh * (34 + 5 * GPT3.heads * plain_cfg.seq / GPT3.hidden)) and round(m_w) == 32 * sbh,
         text("bytes-mb-mw", mb=m_b / sbh, mb_gb=m_b / 1e9, mw=m_w / sbh, mw_gb=m_w / 1e9, share=share),
         m_b=m_b, m_w=m_w))

# %% [markdown] share-varies
# ~~ zh b3f036d9
# 比例随设置而变：选择性激活重计算（selective）本来就不存注意力分数，剩下的几乎都是 W 要的东西。
# ~~ en 449ea1db
# The ratio depends on the setting: selective activation recomputation does not keep the attention scores in the first place, so almost everything left is something W needs.

# %% [text] cfg-plain
# ~~ zh e7925b1a
# 不并行、不做激活重计算
# ~~ en 343d7cd6
# no parallelism, no recomputation

# %% [text] cfg-tp-sp
# ~~ zh 2c886af8
# TP=8 + SP、不做激活重计算
# ~~ en b4a97b59
# TP=8 + SP, no recomputation

# %% [text] cfg-tp-sp-selective
# ~~ zh 24ae1aa7
# TP=8 + SP、选择性激活重计算
# ~~ en 07e4d4ce
# TP=8 + SP, selective recomputation

# %% [text] share-head
# ~~ zh 5e7990a1
# | 设置 | $M_B$（每层） | $M_W$（每层） | `w_mem` |
# |---|---|---|---|
# ~~ en 9a93a43e
# | setting | $M_B$ (per layer) | $M_W$ (per layer) | `w_mem` |
# |---|---|---|---|

# %% [text] share-claim
# ~~ zh bffbbff4
# 不做激活重计算时 W 只占着 {none:.0%}，选择性激活重计算时占着 {selective:.0%}：推迟 W 在后一种情况下几乎不省显存。
# ~~ en ade7f134
# Without recomputation a pending W holds only {none:.0%} of the activations; with selective recomputation it holds {selective:.0%}: in the second case delaying W saves almost no memory.

# %%
share_rows = []
for label, cfg in ((text("cfg-plain"), plain_cfg), (text("cfg-tp-sp"), ActivationConfig(2048, 1, 8, True)),
                   (text("cfg-tp-sp-selective"), ActivationConfig(2048, 1, 8, True, "selective"))):
    b_bytes = layer_activation_bytes(GPT3, cfg)
    share_rows.append((label, b_bytes, w_mem_share(GPT3, cfg)))
md(text("share-head") + "\n"
   + "\n".join(f"| {label} | {b / 1e6:.0f} MB | {b * s_ / 1e6:.0f} MB | {s_:.2f} |" for label, b, s_ in share_rows))
md(claim(share_rows[2][2] > 0.9 > 0.3 > share_rows[1][2],
         text("share-claim", none=share_rows[1][2], selective=share_rows[2][2]), shares=[r[2] for r in share_rows]))

# %% [markdown] real-w-mem
# ~~ zh 427147bd
# 现在把真实的 `w_mem` 放进调度。GPT-3 175B 切成 $p=8$ 段、$m=32$、TP=8 + SP、不做激活重计算，比较 1F1B、ZB-H1 和 ZB-H2 每个 rank 的峰值（权重、梯度和 Adam 状态都算上）。ZB-H1 分两种：默认的 `w_mem` = 1（激活等到 W 才全部释放）和上面算出的真实比例：
# ~~ en 7244414c
# Now put the real `w_mem` into the schedules. Cut GPT-3 175B into $p=8$ stages, $m=32$, TP=8 + SP, no recomputation, and compare the per-rank peaks of 1F1B, ZB-H1 and ZB-H2 (weights, gradients and Adam states included). ZB-H1 appears twice: with the default `w_mem` = 1 (activations held until W) and with the real ratio computed above:

# %% [text] zb-mem-head
# ~~ zh b7ca9ef2
# | 调度 | rank 0 激活 | rank 7 激活 | 最忙 rank 的总量 |
# |---|---|---|---|
# ~~ en c08bcb87
# | schedule | rank 0 activations | rank 7 activations | busiest rank in total |
# |---|---|---|---|

# %% [text] zb-mem-claim
# ~~ zh c05c56ff
# 用真实的 `w_mem` 时，ZB-H1 的 rank 0 和 1F1B 一样存 {base:.1f} GB 激活，往后的 rank 多存 $r$ 个待做 W 的 $M_W$，逐级递减，即 $(p-r)M_B + r M_W$，而不是每个 rank 都存 $p$ 份；ZB-H2 为了填满空隙多做预热前向，rank 0 的激活到 {h2_r0:.1f} GB，最忙的 rank 一共要 {h2_peak:.1f} GB，超过 80 GB；ZB-H1 是 {h1_peak:.1f} GB，装得下。在这个形状上，ZB-H2 省下的 bubble 得拿激活重计算或更多 TP 去换；第 6 节还有一种办法：换一种放置。
# ~~ en 6e1150ee
# With the real `w_mem`, ZB-H1's rank 0 keeps {base:.1f} GB of activations, like 1F1B, and each later rank adds the $M_W$ of its $r$ pending W's, so the amounts step down, $(p-r)M_B + r M_W$, rather than every rank holding $p$ micro-batches. ZB-H2 runs extra warm-up forwards to fill the gaps: its rank 0 reaches {h2_r0:.1f} GB of activations, and the busiest rank needs {h2_peak:.1f} GB in all, more than 80 GB; ZB-H1 needs {h1_peak:.1f} GB and fits. On this shape the bubble ZB-H2 removes has to be paid for with activation recomputation or more TP; section 6 shows one more way: a different placement.

# %%
GPU = 80e9
cfg_zb = ActivationConfig(2048, 1, 8, True, "none")
real_share = w_mem_share(GPT3, cfg_zb)
cases = {"1f1b": ("1f1b", 1.0), "zb-h1, w_mem=1": ("zb-h1", 1.0), f"zb-h1, w_mem={real_share:.2f}": ("zb-h1", real_share),
         f"zb-h2, w_mem={real_share:.2f}": ("zb-h2", real_share)}
zb_mem = {label: pipeline_memory(build(name, 8, 32), GPT3, cfg_zb, Costs(w_mem=wm)) for label, (name, wm) in cases.items()}
fig, axes = figure.subplots(1, len(zb_mem), figsize=(16, 3.4), sharey=True)
for ax, (label, pm) in zip(axes, zb_mem.items()):
    plots.memory_bars(pm.ranks, ax=ax, gpu_mem=GPU, title=label)
figure.show()
acts = {label: [r.activations for r in pm.ranks] for label, pm in zb_mem.items()}
peak = {label: max(pm.peak) for label, pm in zb_mem.items()}
h1_real, h2_real = list(acts)[2], list(acts)[3]
md(text("zb-mem-head") + "\n"
   + "\n".join(f"| {label} | {a[0] / 1e9:.1f} GB | {a[-1] / 1e9:.1f} GB | {peak[label] / 1e9:.1f} GB |"
               for label, a in acts.items()))
md(claim(acts[h1_real][0] == acts["1f1b"][0] and all(x > y for x, y in zip(acts[h1_real], acts[h1_real][1:-1]))
         and peak[h2_real] > GPU >= peak[h1_real],
         text("zb-mem-claim", base=acts["1f1b"][0] / 1e9, h2_r0=acts[h2_real][0] / 1e9, h2_peak=peak[h2_real] / 1e9,
              h1_peak=peak[h1_real] / 1e9),
         h1=acts[h1_real], h2=acts[h2_real], peaks=peak))

# %% [markdown] zero-measures
# ~~ zh cf7a1b93
# ## 3. "零"到底是什么意思
#
# "零 bubble"这个词至少有三种口径，数字差别很大：
#
# 1. **口径一，每个 rank 自己的窗口**（从它第一个算子开始到最后一个算子结束）：`Timeline.idle` 就是这样算的，也是论文表格的口径。
# 2. **口径二，一次迭代**：所有 rank 从同一时刻开始、在最后一个 rank 结束时才算完成，错开的开头和结尾都算 bubble，即 `bubble_ratio`。
# 3. **口径三，稳定状态**：很多次迭代首尾相接时，每次迭代平均多长。
# ~~ en 6828a072
# ## 3. What "zero" really means
#
# "Zero bubble" can be measured in at least three ways, and the numbers differ a lot:
#
# 1. **Measure one, each rank's own window** (from its first op's start to its last op's end): how `Timeline.idle` counts, and how the paper's tables count.
# 2. **Measure two, one iteration**: every rank starts at the same moment and the iteration ends when the last rank ends, so the staggered start and end count as bubble: `bubble_ratio`.
# 3. **Measure three, the steady state**: with many iterations back to back, how long one iteration takes on average.

# %% [text] zero-h2
# ~~ zh 35f3e36d
# ZB-H2 在 $p={p}, m={m}$ 下：窗口内空闲 {idle:g}（口径一是零）；一次迭代 makespan {makespan:g}，而每个 rank 只有 {busy:g} 的工作，bubble 占比 {bubble:.1%}（口径二不是零）。差的 {stagger:g} $=(p-1)F$ 来自错开，各 rank 的窗口是 {windows}：rank $r$ 要等 $r$ 个前向才有活干，rank 0 做完自己的 {busy:g} 之后，只能等最后一个 rank 结束。
# ~~ en d3b15769
# ZB-H2 with $p={p}, m={m}$: no idle time inside the windows, {idle:g} (zero by measure one); one iteration's makespan is {makespan:g} while each rank has {busy:g} of work, a bubble fraction of {bubble:.1%} (not zero by measure two). The difference, {stagger:g} $=(p-1)F$, comes from the staggering; the ranks' windows are {windows}. Rank $r$ has nothing to do until $r$ forwards have passed, and once rank 0 has done its {busy:g} it can only wait for the last rank to finish.

# %% [text] zero-h2-rule
# ~~ zh b14fc7aa
# 这不只是 $F=B=W$ 的巧合：在 {checked} 个点上（$p$ 取 2..8，$m$ 取 $2p-1$..$2p+11$，$F$、$B$、$W$ 各取 0.5..2），ZB-H2 的 makespan 都是 $m(F+B+W) + (p-1)\max(F,\ B-F,\ F+B-2W)$；其中窗口内没有空闲的 {zero} 个点，正好是 $m(F+B+W) + (p-1)F$。
# ~~ en 1faccff7
# This is no coincidence of $F=B=W$: at {checked} points ($p$ from 2 to 8, $m$ from $2p-1$ to $2p+11$, $F$, $B$ and $W$ each from 0.5 to 2), ZB-H2's makespan is $m(F+B+W) + (p-1)\max(F,\ B-F,\ F+B-2W)$; at the {zero} of them with no idle time inside the windows it is exactly $m(F+B+W) + (p-1)F$.

# %%
busy = m * (F + B + Wt)
h2 = tls["zb-h2"]
windows = [(rs[0].start, rs[-1].end) for rs in h2.spans]
assert max(h2.idle) < EPS and abs(h2.makespan - busy - (p - 1) * F) < EPS
zero_idle_points = []


def h2_makespan_rule(p, extra, f, b, w):
    """ZB-H2's makespan m(F+B+W) + (p-1) max(F, B-F, F+B-2W); (p-1)F when no window has idle time."""
    m_ = 2 * p - 1 + extra
    tl = compiled("zb-h2", p, m_).simulate(Costs(f=f, b=b, w=w))
    if max(tl.idle) <= EPS:
        zero_idle_points.append((p, m_, f, b, w))
        if not close(tl.makespan, m_ * (f + b + w) + (p - 1) * f):
            return False
    return close(tl.makespan, m_ * (f + b + w) + (p - 1) * max(f, b - f, f + b - 2 * w))


h2_makespan_sweep = sweep(h2_makespan_rule, {"p": (2, 8), "extra": (0, 12), "f": (0.5, 2.0), "b": (0.5, 2.0),
                                             "w": (0.5, 2.0)}, n=200, seed=3)
md(text("zero-h2", p=p, m=m, idle=max(h2.idle), makespan=h2.makespan, busy=busy, bubble=h2.bubble_ratio,
        stagger=h2.makespan - busy, windows=", ".join(f"rank {r} [{a:g}, {b:g}]" for r, (a, b) in enumerate(windows)))
   + " " + claim(h2_makespan_sweep.holds and bool(zero_idle_points),
                 text("zero-h2-rule", checked=h2_makespan_sweep.checked, zero=len(zero_idle_points)),
                 zero=len(zero_idle_points), **h2_makespan_sweep.figures()))

# %% [markdown] post-validation
# ~~ zh 10d5fe52
# 口径三要看多次迭代。迭代之间如果有一个同步点（优化器步之前做全局的梯度范数裁剪、NaN/Inf 检查），下一次迭代只能
# 等本次完全结束后再开始，每次都付一遍错开的开头和结尾。Zero Bubble 论文的**事后校验（post-validation）**让各 rank 先更新、
# 事后再核对全局条件（不满足就回滚这一步），同步点消失，第 $k+1$ 次迭代的预热可以填进第 $k$ 次的收尾。
# `course.iterations` 把 $K$ 次迭代接起来模拟，两种情形都能算：
# ~~ en b5e8414b
# Measure three needs several iterations. If there is a barrier between iterations (global gradient-norm clipping or a NaN/Inf check before the optimizer step), the next iteration can start
# only once this one has completely finished, and every iteration pays for the staggered start and end again. The Zero Bubble paper's **post-validation** lets each rank update first
# and check the global conditions afterwards (rolling the step back if they fail). The barrier disappears, and iteration $k+1$'s warm-up can fill iteration $k$'s cool-down.
# `course.iterations` simulates $K$ iterations back to back, either way:

# %% [text] periods-head
# ~~ zh 270470ff
# {k} 次迭代的稳定周期：
#
# | 调度 | 有同步点的周期 | 事后校验的周期 | 下界 $m(F+B+W)$ |
# |---|---|---|---|
# ~~ en 52eda9ae
# Steady-state period over {k} iterations:
#
# | schedule | period with a barrier | period with post-validation | lower bound $m(F+B+W)$ |
# |---|---|---|---|

# %% [text] periods-bound
# ~~ zh ac8445b1
# 只有 ZB-H2 加上事后校验，周期才落到下界 {busy:g}（口径三的零）。
# ~~ en 0408bb8a
# Only ZB-H2 with post-validation brings the period down to the lower bound {busy:g} (zero by measure three).

# %% [text] periods-barrier
# ~~ zh 54bb1ca6
# 有同步点时 ZB-H2 的周期是 {h2:g}，ZB-H1 是 {h1:g}：
# ~~ en fe59ff49
# With a barrier ZB-H2's period is {h2:g} and ZB-H1's {h1:g}:

# %% [text] periods-same
# ~~ zh d80da351
# 在 $F=B=W$ 时两者一样，ZB-H2 多存的 $p-1$ 份激活只有去掉同步点才换得回时间（$F$、$B$、$W$ 不相等时不一定，见下面的预测）。
# ~~ en 96440ed2
# with $F=B=W$ they are equal, and the $p-1$ extra micro-batches ZB-H2 keeps buy time only once the barrier is gone (not necessarily so when $F$, $B$ and $W$ differ; see the prediction below).

# %% [text] periods-window
# ~~ zh 39d8cb5f
# 没有同步点时，rank 0 做完本轮的最后一个算子就能开始下一轮的第一个前向，周期就是 rank 0 的窗口长度，即忙碌时间加上它窗口内的空闲：
# ~~ en 35c36a7f
# Without a barrier, rank 0 can start the next iteration's first forward as soon as it finishes this iteration's last op, so the period is the length of rank 0's window: its busy time plus the idle time inside its window:

# %% [text] periods-window-rule
# ~~ zh 71ced532
# 口径一的零（窗口内无空闲）加上事后校验，才得到口径三的零。这些关系不只在这一组数上成立：在 {checked} 个点上（$p$ 取 2..6，$m$ 取 $2p-1$..$2p+5$，$F$、$B$、$W$ 各取 0.5..2，每点 3 次迭代、三种调度），没有同步点的周期都等于 rank 0 的忙碌时间加它窗口内的空闲，有同步点的周期都等于一次迭代的 makespan，而落到下界 $m(F+B+W)$ 的只有 ZB-H2，并且恰好在它窗口内没有空闲的那些点上。
# ~~ en 086d1e0b
# Zero by measure one (no idle time inside the window) plus post-validation is what gives zero by measure three. These relations hold beyond this one setting: at {checked} points ($p$ from 2 to 6, $m$ from $2p-1$ to $2p+5$, $F$, $B$ and $W$ each from 0.5 to 2, three iterations and three schedules per point), the period without a barrier always equals rank 0's busy time plus the idle time inside its window, the period with a barrier always equals one iteration's makespan, and only ZB-H2 ever reaches the lower bound $m(F+B+W)$, exactly at the points where its windows have no idle time.

# %%
K = 4
steady = {}
for name in ("1f1b", "zb-h1", "zb-h2"):
    synced = simulate_iterations(plans[name], costs, iterations=K, sync=True)
    free = simulate_iterations(plans[name], costs, iterations=K, sync=False)
    steady[name] = (synced.period, free.period)
rows = [f"| {name} | {a:g} | {b:g} | {busy:g} |" for name, (a, b) in steady.items()]
md(text("periods-head", k=K) + "\n" + "\n".join(rows))
at_bound = [name for name, (_, free) in steady.items() if abs(free - busy) < EPS]
same_with_barrier = abs(steady["zb-h2"][0] - steady["zb-h1"][0]) < EPS
md(claim(at_bound == ["zb-h2"], text("periods-bound", busy=busy), at_bound=at_bound) + " "
   + text("periods-barrier", h2=steady["zb-h2"][0], h1=steady["zb-h1"][0]) + " "
   + claim(same_with_barrier, text("periods-same"), h2=steady["zb-h2"][0], h1=steady["zb-h1"][0]))


def periods_rule(p, extra, f, b, w):
    """Without a barrier the period is rank 0's busy time plus its idle; with one it is the makespan; only
    ZB-H2 reaches m(F+B+W), exactly when its windows hold no idle time."""
    m_ = 2 * p - 1 + extra
    c = Costs(f=f, b=b, w=w)
    work = m_ * (f + b + w)
    for name in ("1f1b", "zb-h1", "zb-h2"):
        plan, one = compiled(name, p, m_).plan, compiled(name, p, m_).simulate(c)
        free = simulate_iterations(plan, c, iterations=3, sync=False).period
        if not (close(free, work + one.idle[0])
                and close(simulate_iterations(plan, c, iterations=3, sync=True).period, one.makespan)
                and close(free, work) == (name == "zb-h2" and max(one.idle) <= EPS)):
            return False
    return True


periods_sweep = sweep(periods_rule, {"p": (2, 6), "extra": (0, 6), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.5, 2.0)},
                      n=40, seed=4)
for name in plans:
    assert abs(steady[name][1] - (busy + tls[name].idle[0])) < EPS
md(text("periods-window") + "\n\n"
   + "\n".join(f"- {name}: {busy:g} + {tls[name].idle[0]:g} = {busy + tls[name].idle[0]:g}" for name in plans) + "\n\n"
   + claim(periods_sweep.holds, text("periods-window-rule", checked=periods_sweep.checked),
           **periods_sweep.figures()))

# %% [markdown] barrier-figure
# ~~ zh 843f7094
# 画出来更直观：同样几次 ZB-H2 迭代，上图每次迭代之间有同步点，下图用事后校验首尾相接，比较两张图的总长度。
# ~~ en 1a153755
# A picture makes it plain: the same few ZB-H2 iterations, with a barrier between iterations at the top and back to back with post-validation at the bottom. Compare the total lengths.

# %%
K_show = 3
with_barrier = simulate_iterations(plans["zb-h2"], costs, iterations=K_show, sync=True)
post_validated = simulate_iterations(plans["zb-h2"], costs, iterations=K_show, sync=False)
fig, (top, bottom) = figure.subplots(2, 1, figsize=(12, 4), sharex=True)
plots.gantt(with_barrier.timeline, ax=top, labels=False,
            title=f"zb-h2, {K_show} iterations with a barrier: {with_barrier.timeline.makespan:g}")
plots.gantt(post_validated.timeline, ax=bottom, labels=False,
            title=f"zb-h2, {K_show} iterations with post-validation: {post_validated.timeline.makespan:g}")
bottom.set_xlim(0, with_barrier.timeline.makespan)
fig.tight_layout()
figure.show()

# %% [markdown] b-longer
# ~~ zh 54ff2466
# 上面的 $F=B=W$ 只是论文的示意设定。真实的 transformer 里 B 比 W 长：注意力分数 $QK^\top$、softmax 的梯度
# 只有输入梯度、没有权重梯度，一层的 B 约是 $24bsh^2 + 8bs^2h$ 次浮点运算，W 约是 $24bsh^2$。
# ~~ en 3b6e7ebf
# The $F=B=W$ above is only the paper's illustrative setting. In a real transformer B is longer than W: the attention scores $QK^\top$ and the softmax have
# input gradients but no weight gradients, so one layer's B is about $24bsh^2 + 8bs^2h$ floating-point operations and its W about $24bsh^2$.

# %% [markdown] predict-barrier
# ~~ zh 95199a2a
# **预测：** 有同步点（每次迭代都付错开的开头和结尾）、$F=1$、$B=2$、$W=1$ 时，ZB-H2 和 ZB-H1 谁的周期更短？
# 在 `guess_barrier` 里写 `"zb-h2"`、`"zb-h1"` 或 `"same"`。
# ~~ en ac16ea4d
# **Predict:** with a barrier (every iteration pays for the staggered start and end), $F=1$, $B=2$ and $W=1$, which has the shorter period, ZB-H2 or ZB-H1?
# Write `"zb-h2"`, `"zb-h1"` or `"same"` into `guess_barrier`.

# %%
guess_barrier = None    # "zb-h2", "zb-h1" or "same"

# %% [text] barrier-head
# ~~ zh 6d9aad28
# $p={p}, m={m}$，{k} 次迭代，有同步点：
#
# | $F, B, W$ | ZB-H1 周期 | ZB-H2 周期 | ZB-H2 短多少 | $B > W$ | $B > \min(F, W)$ |
# |---|---|---|---|---|---|
# ~~ en f873761e
# $p={p}, m={m}$, {k} iterations with a barrier:
#
# | $F, B, W$ | ZB-H1 period | ZB-H2 period | ZB-H2 shorter by | $B > W$ | $B > \min(F, W)$ |
# |---|---|---|---|---|---|

# %% [text] reveal-barrier
# ~~ zh 2a444558
# 有同步点时，周期就是一次迭代的 makespan。两张计划的闭式解：ZB-H1 是 $m(F+B+W) + (p-1)\max(F,\ B,\ F+B-W)$，ZB-H2 是 $m(F+B+W) + (p-1)\max(F,\ B-F,\ F+B-2W)$。比较两个最大值：$B > F$ 时 ZB-H1 那一项至少是 $B$，比 ZB-H2 的三项都大；$B \le F$ 时两边都是 $F$ 再加一点，ZB-H1 加 $\max(0, B-W)$，ZB-H2 加 $\max(0, B-2W)$，只在 $B > W$ 时不同。所以 **ZB-H2 从不比 ZB-H1 慢，严格更快当且仅当 $B > \min(F, W)$**。两个闭式解和这个条件在 {checked} 个点上（$p$ 取 2..8，$m$ 取 $2p-1$..$2p+11$，$F$、$B$、$W$ 各取 0.5..2）都与模拟一致。只看 $F=1$ 的行会以为条件是 $B > W$：表里 {old} 这几行说明不是。所以"ZB-H2 只有去掉同步点才划算"只在 $B \le \min(F, W)$ 时成立；transformer 里 $B > W$，ZB-H2 多存的激活即使有同步点也换得回时间。
# ~~ en cf9c8558
# With a barrier the period is one iteration's makespan. The two plans' closed forms: ZB-H1 takes $m(F+B+W) + (p-1)\max(F,\ B,\ F+B-W)$ and ZB-H2 $m(F+B+W) + (p-1)\max(F,\ B-F,\ F+B-2W)$. Compare the two maxima. When $B > F$, ZB-H1's is at least $B$, larger than each of ZB-H2's three terms. When $B \le F$, both are $F$ plus a little: ZB-H1 adds $\max(0, B-W)$ and ZB-H2 $\max(0, B-2W)$, which differ only when $B > W$. So **ZB-H2 is never slower than ZB-H1, and strictly faster exactly when $B > \min(F, W)$**. Both closed forms and the condition agree with the simulator at {checked} points ($p$ from 2 to 8, $m$ from $2p-1$ to $2p+11$, $F$, $B$ and $W$ each from 0.5 to 2). Looking only at rows with $F=1$ one would guess the condition is $B > W$; the rows {old} of the table show it is not. So "ZB-H2 pays off only without the barrier" holds only when $B \le \min(F, W)$; in a transformer $B > W$, and ZB-H2's extra activations buy time even with the barrier.

# %%
barrier_rows = []
barrier = {}
for fbw in ((1, 1, 1), (1, 0.8, 1.2), (1, 1.2, 0.8), (1, 1.5, 1), (1, 2, 1), (1, 1, 0.5), (0.5, 0.75, 0.75),
            (2, 1.5, 1)):
    c = Costs(*fbw)
    h1, h2 = (simulate_iterations(plans[name], c, iterations=K, sync=True).period for name in ("zb-h1", "zb-h2"))
    barrier[fbw] = (h1, h2)
    marks = ["✓" if fbw[1] > fbw[2] else "", "✓" if fbw[1] > min(fbw[0], fbw[2]) else ""]
    barrier_rows.append(f"| {', '.join(f'{x:g}' for x in fbw)} | {h1:g} | {h2:g} | {h1 - h2:.3g} | {marks[0]} | {marks[1]} |")
md(text("barrier-head", p=p, m=m, k=K) + "\n" + "\n".join(barrier_rows))


def barrier_rule(p, extra, f, b, w):
    """With a barrier: both closed forms hold, ZB-H2 is never slower, and strictly faster iff B > min(F, W)."""
    m_ = 2 * p - 1 + extra
    c = Costs(f=f, b=b, w=w)
    h1 = compiled("zb-h1", p, m_).simulate(c).makespan
    h2 = compiled("zb-h2", p, m_).simulate(c).makespan
    work = m_ * (f + b + w)
    return (close(h1, work + (p - 1) * max(f, b, f + b - w)) and close(h2, work + (p - 1) * max(f, b - f, f + b - 2 * w))
            and h2 <= h1 + EPS and (h2 < h1 - EPS) == (b > min(f, w)))


barrier_sweep = sweep(barrier_rule, {"p": (2, 8), "extra": (0, 12), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.5, 2.0)},
                      n=200, seed=5)
table_agrees = all(h2 <= h1 + EPS and (h1 - h2 > EPS) == (fbw[1] > min(fbw[0], fbw[2]))
                   for fbw, (h1, h2) in barrier.items())
old_rule_breaks = [fbw for fbw, (h1, h2) in barrier.items() if (h1 - h2 > EPS) != (fbw[1] > fbw[2])]
h1_case, h2_case = barrier[(1, 2, 1)]
answer_barrier = "zb-h2" if h2_case < h1_case - EPS else "zb-h1" if h1_case < h2_case - EPS else "same"
md(reveal(guess_barrier, answer_barrier,
          claim(barrier_sweep.holds and table_agrees and bool(old_rule_breaks),
                text("reveal-barrier", checked=barrier_sweep.checked, old=old_rule_breaks),
                barrier=barrier, **barrier_sweep.figures())))

# %% [markdown] unequal
# ~~ zh cc9370a2
# ## 4. 自己动手：F、B、W 不相等时
#
# 真实模型里 $F$、$B$、$W$ 并不相等（对一个 Linear，B 和 W 都是一次矩阵乘，和 F 差不多；注意力等部分则不然）。
# 论文给 ZB-H2 的空闲是 $(p-1)(F+B-2W)$，截到 0。它成立有条件：
# ~~ en ffd58581
# ## 4. Your turn: when F, B and W differ
#
# In real models $F$, $B$ and $W$ are not equal (for a Linear, B and W are each one matrix product, about as long as F; attention and other parts are different).
# The paper gives ZB-H2's idle time as $(p-1)(F+B-2W)$, clipped at 0. That formula holds only under a condition:

# %% [markdown] predict-h2-idle
# ~~ zh e4c6aebf
# **预测：** $F=0.5$、$B=1.2$、$W=1$ 时公式给出 $\max(0, 3\times(-0.3)) = 0$。模拟的 ZB-H2 rank 0 窗口内空闲是多少？
# ~~ en 04aa362d
# **Predict:** with $F=0.5$, $B=1.2$ and $W=1$ the formula gives $\max(0, 3\times(-0.3)) = 0$. How much idle time does the simulated ZB-H2 have inside rank 0's window?

# %%
guess_h2_idle = None    # a number

# %% [text] idle-head
# ~~ zh 1805bcd5
# $p={p}, m={m}$：
#
# | $F, B, W$ | ZB-H1 最大空闲 | $(p-1)(F+B-W)$ | ZB-H2 rank 0 空闲 | $(p-1)(F+B-2W)$，截到 0 | $(p-1)(B-F)$ |
# |---|---|---|---|---|---|
# ~~ en ee9100c9
# $p={p}, m={m}$:
#
# | $F, B, W$ | ZB-H1 max idle | $(p-1)(F+B-W)$ | ZB-H2 rank-0 idle | $(p-1)(F+B-2W)$, clipped | $(p-1)(B-F)$ |
# |---|---|---|---|---|---|

# %%
rows = []
fits = {}
for fbw in ((1, 1, 0.25), (1, 1, 0.5), (1, 1, 1.0), (1, 1, 2.0), (1, 1.5, 1), (1, 2, 1), (0.5, 1.2, 1), (1, 0.5, 1)):
    f_, b_, w_ = fbw
    c = Costs(*fbw)
    h1, h2 = max(simulate(plans["zb-h1"], c).idle), simulate(plans["zb-h2"], c).idle[0]
    paper_h1, paper_h2 = max(0.0, (p - 1) * (f_ + b_ - w_)), max(0.0, (p - 1) * (f_ + b_ - 2 * w_))
    fits[fbw] = {"h1": abs(h1 - paper_h1) < EPS, "h2": abs(h2 - paper_h2) < EPS,
                 "h2_general": abs(h2 - max(paper_h2, (p - 1) * (b_ - f_))) < EPS}
    rows.append(f"| {f_:g}, {b_:g}, {w_:g} | {h1:.3g} | {paper_h1:.3g} | {h2:.3g} | {paper_h2:.3g} | {(p - 1) * (b_ - f_):.3g} |")
md(text("idle-head", p=p, m=m) + "\n" + "\n".join(rows))
h2_idle_case = simulate(plans["zb-h2"], Costs(f=0.5, b=1.2, w=1)).idle[0]

# %% [text] reveal-h2-idle
# ~~ zh 0c33331e
# ZB-H2 的公式 $(p-1)(F+B-2W)$ 在表里 {holds} 行成立，在 {fails} 不成立，不成立的恰好是 $B > F$ 且 $W > F$ 的行。原因在 rank 0 的稳定阶段：下游的 B 比本 rank 的 F 长时，每一段要等 $B-F$，W 填不进这种等待。rank 0 的空闲是 $(p-1)\max(0,\ F+B-2W,\ B-F)$，论文的公式成立当且仅当 $B \le F$ 或 $W \le F$：这两句在 {checked} 个点上（$p$ 取 2..8，$m$ 取 $2p-1$..$2p+11$，$F$、$B$、$W$ 各取 0.5..2）都与模拟一致。
# ~~ en b143b6ba
# ZB-H2's formula $(p-1)(F+B-2W)$ holds in {holds} rows of the table and fails in {fails}, exactly the rows with $B > F$ and $W > F$. The reason lies in rank 0's steady state: when the downstream B is longer than this rank's F, every cycle waits $B-F$, and no W can fill that kind of wait. Rank 0's idle time is $(p-1)\max(0,\ F+B-2W,\ B-F)$, and the paper's formula holds exactly when $B \le F$ or $W \le F$: both statements agree with the simulator at {checked} points ($p$ from 2 to 8, $m$ from $2p-1$ to $2p+11$, $F$, $B$ and $W$ each from 0.5 to 2).

# %% [text] reveal-h1-idle-rule
# ~~ zh 2b2e2e14
# ZB-H1 的最大空闲是 $(p-1)\max(F+B-W,\ B)$，等于论文的 $(p-1)(F+B-W)$ 当且仅当 $W \le F$（{checked} 个点，$m$ 取 $p$..$p+12$，其余范围同上）：$W > F$ 时每段空等至少是一个 B，比 $F+B-W$ 长。表里与论文不符的行 {h1_fails} 都是 $W > F$。`formulas.predict` 给 ZB-H1 的就是这个一般的闭式解。
# ~~ en 459712a4
# ZB-H1's largest idle time is $(p-1)\max(F+B-W,\ B)$, equal to the paper's $(p-1)(F+B-W)$ exactly when $W \le F$ ({checked} points, $m$ from $p$ to $p+12$, the other ranges as above): when $W > F$ each wait lasts at least one B, longer than $F+B-W$. The table's rows that disagree with the paper, {h1_fails}, all have $W > F$. `formulas.predict` gives ZB-H1 this general closed form.

# %%
def h2_idle_rule(p, extra, f, b, w):
    """ZB-H2's rank-0 idle is (p-1) max(0, F+B-2W, B-F); the paper's (p-1) max(0, F+B-2W) iff B <= F or W <= F."""
    idle0 = compiled("zb-h2", p, 2 * p - 1 + extra).simulate(Costs(f=f, b=b, w=w)).idle[0]
    paper = (p - 1) * max(0.0, f + b - 2 * w)
    return close(idle0, (p - 1) * max(0.0, f + b - 2 * w, b - f)) and close(idle0, paper) == (b <= f or w <= f)


def h1_idle_rule(p, extra, f, b, w):
    """ZB-H1's largest idle is (p-1) max(F+B-W, B); the paper's (p-1)(F+B-W) iff W <= F."""
    idle = max(compiled("zb-h1", p, p + extra).simulate(Costs(f=f, b=b, w=w)).idle)
    return close(idle, (p - 1) * max(f + b - w, b)) and close(idle, (p - 1) * (f + b - w)) == (w <= f)


space = {"p": (2, 8), "extra": (0, 12), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.5, 2.0)}
h2_idle_sweep = sweep(h2_idle_rule, space, n=200, seed=6)
h1_idle_sweep = sweep(h1_idle_rule, space, n=200, seed=7)
formula_h2_holds = [fbw for fbw, ok in fits.items() if ok["h2"]]
formula_h2_fails = [fbw for fbw, ok in fits.items() if not ok["h2"]]
h1_fails = [fbw for fbw, ok in fits.items() if not ok["h1"]]
md(reveal(guess_h2_idle, round(h2_idle_case, 6),
          claim(h2_idle_sweep.holds and all(ok["h2_general"] for ok in fits.values()) and bool(formula_h2_fails)
                and all((fbw[1] > fbw[0] and fbw[2] > fbw[0]) == (fbw in formula_h2_fails) for fbw in fits),
                text("reveal-h2-idle", holds=len(formula_h2_holds), fails=formula_h2_fails,
                     checked=h2_idle_sweep.checked),
                fits=fits, **h2_idle_sweep.figures()))
   + " " + claim(h1_idle_sweep.holds and bool(h1_fails) and all(fbw[2] > fbw[0] for fbw in h1_fails),
                 text("reveal-h1-idle-rule", checked=h1_idle_sweep.checked, h1_fails=h1_fails),
                 h1_fails=h1_fails, **h1_idle_sweep.figures()))

# %% [markdown] explore-w
# ~~ zh ebdb469b
# 再拖动下面的 `w`（相对 $F=B=1$）看空隙如何变化：$W$ 太小时没有足够的 W 去填空隙。
# ~~ en e9ddaace
# Now drag `w` below (relative to $F=B=1$) and watch the gaps change: when $W$ is too small there is not enough W to fill them.

# %%
def zero_bubble_explorer(fig, schedule, p, w):
    tl = simulate(build(schedule, p, 2 * p), Costs(f=1, b=1, w=w))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    plots.gantt(tl, ax=left, labels=False,
                title=f"{schedule}, p={p}, m={2 * p}, W={w:.2f}: makespan {tl.makespan:.4g}, "
                      f"max idle {max(tl.idle):.3g}")
    plots.memory(tl, ax=right)


explore(zero_bubble_explorer, figsize=(12, 3.8), schedule=["zb-h1", "zb-h2", "1f1b"], p=(2, 6, 4),
        w=(0.25, 2.0, 1.0, 0.25))

# %% [markdown] task-w
# ~~ zh aab0480d
# **任务：** 在浏览器里选 `zb-h2`、$p=4$，找出让最大空闲（标题里的 `max idle`）变成 0 的最小 `w`，写进 `answer_w`。
# ~~ en 0a652b8d
# **Task:** in the explorer pick `zb-h2` and $p=4$, and find the smallest `w` that makes the largest idle time (`max idle` in the title) 0. Write it into `answer_w`.

# %%
answer_w = None         # the smallest w on the slider with max idle 0 (zb-h2, p=4)

# %% [text] reveal-w
# ~~ zh 93f9c6d7
# 空闲是 $(p-1)\max(0, F+B-2W, B-F)$，$F=B=1$ 时在 $W \ge (F+B)/2 = {w:g}$ 处变成 0。
# ~~ en 8122d05c
# The idle time is $(p-1)\max(0, F+B-2W, B-F)$; with $F=B=1$ it becomes 0 at $W \ge (F+B)/2 = {w:g}$.

# %%
slider_ws = [0.25 * k for k in range(1, 9)]
zero_at = min(w for w in slider_ws if max(simulate(build("zb-h2", 4, 8), Costs(f=1, b=1, w=w)).idle) < EPS)
md(reveal(answer_w, zero_at, text("reveal-w", w=zero_at)))

# %% [markdown] live
# ~~ zh def34b5b
# ## 5. 真跑 ZB-H1：梯度一致，测得的时间与模拟对照
#
# 同一个 ZB-H1 计划交给 `course.live`：B 求出 stage 输入的梯度立刻发给上一个 rank，W 在计划排定的位置再算权重梯度。
# 两件事要验证：梯度逐个参数与单进程一致（拆分没有算错）；在模拟的设备时间下，测得的 makespan 比 1F1B 短，比例接近模拟。
# 下一格启动进程并记录结果，再下一格只读这些结果。
# ~~ en 6b7be6e0
# ## 5. Running ZB-H1 for real: matching gradients, measured time against the simulation
#
# Hand the same ZB-H1 plan to `course.live`: B computes the gradient of the stage input and sends it to the previous rank at once, and W computes the weight gradients where the plan puts them.
# Two things to verify: every parameter's gradient matches a single process (the split computes the right thing), and with emulated device time the measured makespan is shorter than 1F1B's, by about the simulated ratio.
# The next cell starts the processes and records the results; the one after only reads them.

# %%
live_p, live_m, live_costs = 4, 8, Costs(f=1, b=1, w=1)
# recordings.run("zb-h1-emulated") is run_plan(build("zb-h1", live_p, live_m), live_costs, emulate=True) from
# course.live, run live where torch is installed; without torch (the browser edition) it shows the recorded run.
live = {name: recordings.run(f"{name}-emulated") for name in ("1f1b", "zb-h1")}
assert all(r.plan.p == live_p and r.plan.m == live_m and r.options.costs == live_costs for r in live.values())
live_sim = {name: simulate(build(name, live_p, live_m), live_costs).makespan for name in live}

# %% [text] live-grads
# ~~ zh 0a7d4cb5
# 两次运行的梯度都与单进程参照一致（最大绝对误差 {err:.1e}）：拆开的 B 和 W 加起来就是完整的反向。ZB-H1 / 1F1B 的 makespan：测得 {measured:.2f}，模拟 {simulated:.2f}。
# ~~ en 3b369eb6
# Both runs' gradients match the single-process reference (largest absolute error {err:.1e}): B and W split apart add up to the full backward. ZB-H1 / 1F1B makespan: measured {measured:.2f}, simulated {simulated:.2f}.

# %% [text] live-close
# ~~ zh fcab17c3
# 测得的比值接近模拟：真跑也更快，差距来自进程调度和通信，模拟器没有计入。
# ~~ en ef13cea1
# The measured ratio is close to the simulated one: the real run is faster too, and the difference comes from process scheduling and communication, which the simulator leaves out.

# %% [text] live-far
# ~~ zh 497d9594
# 测得的比值离模拟较远：这台机器上进程在抢 CPU（本机 {cores} 个逻辑核，{ranks} 个 rank），算子本身就超过了模拟的设备时间（emulate 只能补齐，不能压缩）。
# ~~ en 1179fe3c
# The measured ratio is far from the simulated one: the processes compete for the CPU on this machine ({cores} logical cores, {ranks} ranks), so the ops themselves exceed the emulated device time (emulation can only pad, never compress).

# %%
import os

for name, res in live.items():
    print(f"{name}: grad_ok={res.grad_ok} max_abs_err={res.max_abs_err:.1e} "
          f"measured={res.measured_makespan:.3f}s simulated={res.simulated_makespan:.3f}s")
ratio_measured = live["zb-h1"].measured_makespan / live["1f1b"].measured_makespan
ratio_sim = live_sim["zb-h1"] / live_sim["1f1b"]
md(claim(all(r.grad_ok for r in live.values()),
         text("live-grads", err=max(r.max_abs_err for r in live.values()), measured=ratio_measured,
              simulated=ratio_sim), errors=[r.max_abs_err for r in live.values()])
   + " " + claim(ratio_measured < 1 and abs(ratio_measured - ratio_sim) <= 0.1, text("live-close"),
                 otherwise=text("live-far", cores=os.cpu_count(), ranks=live_p)))
fig = plots.compare([live["1f1b"].timeline, live["zb-h1"].timeline], titles=["1f1b measured", "zb-h1 measured"])
figure.show()

# %% [markdown] memory-knob
# ~~ zh b14c874c
# ## 6. 显存是一个旋钮：building block 的视角
#
# 到这里，显存一直是调度的结果：1F1B 存 $p$ 份，ZB-H2 存 $2p-1$ 份。Qi、Wan、Amar、Lin 的论文 *Pipeline Parallelism with Controllable Memory*（NeurIPS 2024，arXiv:2405.15362，Zero Bubble 的同一组作者）把问题倒过来：先定显存，再设计调度。
#
# 他们的观察：几乎所有调度都是把**一个 micro-batch 的全部算子**在时间上排好（**building block**），再每隔固定的**间隔** $T$（interval）复制一份给下一个 micro-batch。在一个 rank 上，一个 micro-batch 的激活从它的 F 开始，一直活到最后一个还要用它的算子（`w_mem` = 1 时是 W，不拆分时是完整反向）结束，这段时间是它在这个 rank 上的 **lifespan** $l$。稳定阶段里每隔 $T$ 进来一个、每个活 $l$，某一时刻活着的就是最近 $l$ 这段时间里进来的那些，$\lfloor l/T \rfloor$ 或 $\lceil l/T \rceil$ 个：
#
# $$\text{峰值} \approx \left\lceil \frac{l}{T} \right\rceil \text{ 份激活}.$$
#
# 显存由 lifespan 决定：想省显存，就得缩短一个 micro-batch 在 rank 上停留的时间。先拿 1F1B 验证：在模拟的时间线上取稳定阶段的一个 micro-batch，量出每个 rank 的 $l$ 和 $T$，和模拟器算出的峰值对照（$F=B=W=1$，1F1B 的完整反向是 2）。
# ~~ en a9d2739d
# ## 6. Memory as a knob: the building-block view
#
# So far memory has been an outcome of the schedule: 1F1B keeps $p$ micro-batches, ZB-H2 $2p-1$. The paper *Pipeline Parallelism with Controllable Memory* by Qi, Wan, Amar and Lin (NeurIPS 2024, arXiv:2405.15362, by the Zero Bubble authors) turns the question around: decide the memory first, then design the schedule.
#
# Their observation: almost every schedule places **all the ops of one micro-batch** in time (a **building block**) and repeats that block every fixed **interval** $T$ for the next micro-batch. On a rank, a micro-batch's activations live from the start of its F to the end of the last op that still needs them (W when `w_mem` = 1, the full backward when the backward is not split): that time is its **lifespan** $l$ on the rank. In the steady state one micro-batch arrives every $T$ and each lives $l$, so the ones alive at any moment are those that arrived during the last $l$, $\lfloor l/T \rfloor$ or $\lceil l/T \rceil$ of them:
#
# $$\text{peak} \approx \left\lceil \frac{l}{T} \right\rceil \text{ micro-batches' activations}.$$
#
# Memory is set by the lifespan: to save memory, shorten the time a micro-batch stays on a rank. Check it on 1F1B first: take a micro-batch in the steady state of the simulated timeline, measure $l$ and $T$ on every rank, and compare with the peak the simulator computes ($F=B=W=1$, so 1F1B's full backward takes 2).

# %% [text] lifespan-head
# ~~ zh b08abc2a
# | rank | lifespan $l$ | 间隔 $T$ | $l/T$ | 模拟的峰值 |
# |---|---|---|---|---|
# ~~ en 282dce14
# | rank | lifespan $l$ | interval $T$ | $l/T$ | simulated peak |
# |---|---|---|---|---|

# %% [text] lifespan-1f1b
# ~~ zh 25a5a5f4
# 每个 rank 都是 $l = (p-r)(F+B+W)$、$T = F+B+W$，峰值正好是 $l/T = p-r$：rank 0 存得最多，因为它的 micro-batch 要走完整条流水线再回来，lifespan 最长。这不只是这一组数：在 {checked} 个点上（$p$ 取 2..8，$m$ 取 $2p$..$2p+8$，$F$ 和完整反向各取 0.5..2），量出的 $l/T$ 在每个 rank 上都等于模拟的峰值。
# ~~ en f8a795ea
# Every rank has $l = (p-r)(F+B+W)$ and $T = F+B+W$, and the peak is exactly $l/T = p-r$: rank 0 holds the most because its micro-batches travel the whole pipeline and back, the longest lifespan. This is not just one setting: at {checked} points ($p$ from 2 to 8, $m$ from $2p$ to $2p+8$, $F$ and the full backward each from 0.5 to 2) the measured $l/T$ equals the simulated peak on every rank.

# %%
def op_times(tl):
    """When each op of a timeline starts and ends, by (kind, micro-batch, stage)."""
    start, end = {}, {}
    for r in range(tl.p):
        for step, s, e in zip(tl.steps[r], tl.starts[r], tl.ends[r]):
            start[step], end[step] = s, e
    return start, end


def one_f_one_b_lifespans(p, m, costs):
    """1F1B's timeline and, per rank, a steady-state micro-batch's lifespan (its F's start to its backward's end)
    and the interval between two consecutive forwards."""
    tl = compiled("1f1b", p, m).simulate(costs)
    start, end = op_times(tl)
    i = m // 2
    return (tl, [end["B", i, r] - start["F", i, r] for r in range(p)],
            [start["F", i + 1, r] - start["F", i, r] for r in range(p)])


tl_1f1b, spans, intervals = one_f_one_b_lifespans(p, m, costs)
md(text("lifespan-head") + "\n"
   + "\n".join(f"| {r} | {life:g} | {t:g} | {life / t:g} | {pk:g} |"
               for r, (life, t, pk) in enumerate(zip(spans, intervals, tl_1f1b.peak_activations))))


def lifespan_rule(p, extra, f, b):
    """1F1B: on every rank the steady-state lifespan over the interval is the simulated peak."""
    tl, ls, ts = one_f_one_b_lifespans(p, 2 * p + extra, Costs(f=f, b=b, w=0))
    return all(close(life / t, pk) for life, t, pk in zip(ls, ts, tl.peak_activations))


lifespan_sweep = sweep(lifespan_rule, {"p": (2, 8), "extra": (0, 8), "f": (0.5, 2.0), "b": (0.5, 2.0)}, n=60, seed=8)
md(claim(lifespan_sweep.holds and all(close(life, (p - r) * (F + B + Wt)) for r, life in enumerate(spans)),
         text("lifespan-1f1b", checked=lifespan_sweep.checked), spans=spans, **lifespan_sweep.figures()))

# %% [markdown] v-blocks
# ~~ zh 8d7d94c7
# ### 6.1 V 形放置与三个 building block
#
# 1F1B 的显存不均：rank 0 存 $p$ 份，最后一个 rank 只存 1 份。要让每个 rank 的 lifespan 都短，Qi 等人用 **V 形放置**（第 6 章的 ZB-V 也用它）：模型切成 $2p$ 个 chunk，rank $r$ 持有 chunk $r$ 和 $2p-1-r$。一个 micro-batch 沿 rank $0 \to p-1$ 走 chunk $0..p-1$，再沿 rank $p-1 \to 0$ 走 chunk $p..2p-1$，反向原路返回。每个 rank 每个 micro-batch 做 6 个算子（两个 chunk 的 F、B、W），每个只有一个 stage 的一半长，所以 $T$ 仍是 $F+B+W$。$F=B=W$ 时把一个 chunk 算子的时长记作一**格**（slot），$T = 6$ 格；一个 chunk 的激活是一个 stage 的一半。
#
# building block 由相邻算子之间隔几格（offset）决定：同一个 micro-batch 在相邻两个 chunk 上的 F 之间隔几格，B 之间隔几格；W 紧跟在自己的 B 后面。同一个 rank 上两个算子不能落在模 $T$ 同余的格子里（否则复制以后会撞车），撞上的就往后挪一格。论文给出三个：
#
# - **V-Min**：所有 offset 都是 1，最紧的 block；
# - **V-Half**：F 之间 2、1 交替（B 之间标称 1 格，但会和已经放下的算子撞车而被推后，实际也是 2、1 交替）；
# - **V-ZB**：第一段 4 格、拐弯处 3 格、第二段 2 格，再把开头和结尾重排（论文的 reordering），在 $F=B=W$、$m \ge 2p-1$ 时没有空闲。
#
# 本库里它们是 `v-min`、`v-half`、`v-zb`（`course/schedules/controllable.py`），block 本身由 `block(name, p)` 给出。下一格打印 $p=4$ 时三个 block 的格子。
# ~~ en c570c8bc
# ### 6.1 The V placement and three building blocks
#
# 1F1B's memory is lopsided: rank 0 keeps $p$ micro-batches, the last rank only 1. To make every rank's lifespan short, Qi et al. use the **V placement** (chapter 6's ZB-V uses it too): the model is cut into $2p$ chunks and rank $r$ holds chunks $r$ and $2p-1-r$. A micro-batch runs chunks $0..p-1$ down ranks $0 \to p-1$, then chunks $p..2p-1$ back up ranks $p-1 \to 0$, and its backward retraces the path. Each rank runs 6 ops per micro-batch (F, B and W of two chunks), each half as long as a stage's, so $T$ is still $F+B+W$. With $F=B=W$, call one chunk op's duration a **slot**: $T = 6$ slots, and one chunk's activations are half a stage's.
#
# A building block is set by its offsets, the number of slots between neighbouring ops: between one micro-batch's F on two consecutive chunks, and between its B's; each W comes right after its own B. Two ops on the same rank must not land on slots that are equal modulo $T$ (the copies would collide), and an op that would is pushed one slot later. The paper gives three:
#
# - **V-Min**: every offset 1, the tightest block;
# - **V-Half**: forward offsets alternating 2 and 1 (the backward offsets are nominally 1, but collisions with ops already placed push them, so they alternate 2 and 1 as well);
# - **V-ZB**: 4 slots along the first leg, 3 at the turn, 2 along the second leg, then the start and the end reordered (the paper's reordering); with $F=B=W$ and $m \ge 2p-1$ it has no idle time.
#
# In the library they are `v-min`, `v-half` and `v-zb` (`course/schedules/controllable.py`), and `block(name, p)` gives the block itself. The next cell prints the three blocks' slots for $p=4$.

# %% [text] block-head
# ~~ zh 9f17771e
# $p={p}$，chunk 0 到 {last} 上 F、B、W 所在的格子（一个 micro-batch）：
#
# | block | F | B | W |
# |---|---|---|---|
# ~~ en 987fad75
# $p={p}$, the slots of F, B and W on chunks 0 to {last} (one micro-batch):
#
# | block | F | B | W |
# |---|---|---|---|

# %%
from course.schedules.controllable import PERIOD, block

V_NAMES = ("v-min", "v-half", "v-zb")
md(text("block-head", p=p, last=2 * p - 1) + "\n"
   + "\n".join(f"| {name} | " + " | ".join(str([block(name, p)[kind, s] for s in range(2 * p)]) for kind in "FBW") + " |"
               for name in V_NAMES))

# %% [markdown] predict-v-share
# ~~ zh 459df15e
# **预测：** 设每个 offset 都是 $\delta$ 格。rank $r$ 的两个 chunk 的 lifespan 加起来大约多少格？（提示：在 chunk $c$ 上做完 F 之后，这个 micro-batch 还要往后走 $2p-1-c$ 个 chunk，梯度再原路走回来。）由此推出 $p$ 很大时每个 rank 的峰值是 1F1B 的 $p$ 份的几分之几。分别写出 V-Min（$\delta = 1$）和 V-Half（平均 $\delta = 1.5$）的比例，写成列表 `[V-Min, V-Half]`。
# ~~ en 3165a5d3
# **Predict:** suppose every offset is $\delta$ slots. About how many slots do rank $r$'s two chunks' lifespans add up to? (Hint: after its F on chunk $c$, the micro-batch still has $2p-1-c$ chunks to go, and its gradient comes back the same way.) From that, derive the fraction of 1F1B's $p$ micro-batches each rank peaks at when $p$ is large. Give it for V-Min ($\delta = 1$) and V-Half ($\delta = 1.5$ on average) as a list `[V-Min, V-Half]`.

# %%
guess_v_shares = None   # [V-Min, V-Half], e.g. [0.5, 0.75]

# %% [text] v-head
# ~~ zh 41badfc2
# $F=B=W=1$（一格 = {slot:g}），$m=6p$，rank 0 上一个稳定阶段 micro-batch 的两个 lifespan 和模拟的峰值（以一个 stage 的激活为 1 份）：
#
# | 调度 | $p$ | rank 0 的 $l_0$、$l_1$ | $T$ | $\lceil L/T\rceil/2$ | $(\lceil l_0/T\rceil + \lceil l_1/T\rceil)/2$ | rank 0 的峰值 | 所有 rank 中最大的峰值 | 与 1F1B 的 $p$ 之比 | 最大空闲与 1F1B 之比 |
# |---|---|---|---|---|---|---|---|---|---|
# ~~ en 8086fcca
# $F=B=W=1$ (one slot = {slot:g}), $m=6p$: on rank 0, the two lifespans of a steady-state micro-batch, and the simulated peak (one stage's activations = 1):
#
# | schedule | $p$ | rank 0's $l_0$, $l_1$ | $T$ | $\lceil L/T\rceil/2$ | $(\lceil l_0/T\rceil + \lceil l_1/T\rceil)/2$ | rank 0's peak | largest peak over ranks | over 1F1B's $p$ | max idle over 1F1B's |
# |---|---|---|---|---|---|---|---|---|---|

# %% [text] v-bracket
# ~~ zh cd9ef2e3
# 两个 chunk 各自活着的份数分别在 $\lfloor l_c/T\rfloor$ 和 $\lceil l_c/T\rceil$ 之间变化，总数的平均是 $L/T$（$L = l_0 + l_1$），每份半个 stage，所以每个 rank 的峰值一定落在 $\lceil L/T\rceil/2$ 和 $(\lceil l_0/T\rceil + \lceil l_1/T\rceil)/2$ 之间。在随机抽取的 {checked} 个 (调度, $p$) 上（三个 block，$p$ 取 2..16，每个 rank 都量），模拟的峰值都落在这个区间里，最大值也都等于作者给出的 $\lfloor (p+4)/3 \rfloor$（V-Min）、$\lfloor (p+2)/2 \rfloor$（V-Half）和 $p$（V-ZB）（作者的 Hugging Face 演示页 sail/pipeline-parallelism-with-controllable-memory 上的表）。在表里的三个 $p$ 上，显存越少的 block 空闲越多：省下的显存是拿 bubble 换的。
# ~~ en 50e5bb2e
# Each chunk's live count moves between $\lfloor l_c/T\rfloor$ and $\lceil l_c/T\rceil$ and the total averages $L/T$ (with $L = l_0 + l_1$), each unit half a stage, so every rank's peak must lie between $\lceil L/T\rceil/2$ and $(\lceil l_0/T\rceil + \lceil l_1/T\rceil)/2$. At {checked} randomly drawn (schedule, $p$) pairs (the three blocks, $p$ from 2 to 16, every rank measured) the simulated peak lies in that range, and the largest equals the authors' $\lfloor (p+4)/3 \rfloor$ (V-Min), $\lfloor (p+2)/2 \rfloor$ (V-Half) and $p$ (V-ZB) (the table on the authors' Hugging Face demo page, sail/pipeline-parallelism-with-controllable-memory). At the table's three values of $p$, the block with less memory idles more: the memory saved is paid for in bubble.

# %%
PUBLISHED_PEAK = {"v-min": lambda p: (p + 4) // 3, "v-half": lambda p: (p + 2) // 2, "v-zb": lambda p: p}
unit = Costs(f=1, b=1, w=1)


def v_measure(name, p):
    """A V schedule with F = B = W = 1 and m = 6p: its timeline, the interval, and per rank the two lifespans of
    a steady-state micro-batch."""
    m_ = 6 * p
    tl = compiled(name, p, m_).simulate(unit)
    start, end = op_times(tl)
    i = m_ // 2
    interval = start["F", i + 1, 0] - start["F", i, 0]
    lives = [[end["W", i, s] - start["F", i, s] for s in (r, 2 * p - 1 - r)] for r in range(p)]
    return tl, interval, lives


def bracket(lives, interval):
    """The range a rank's peak (in stages) must lie in, from its two chunks' lifespans."""
    low = -(-sum(lives) // interval) / 2
    high = sum(-(-life // interval) for life in lives) / 2
    return low, high


def v_rule(name, p):
    tl, interval, lives = v_measure(name, p)
    in_range = all(bracket(ls, interval)[0] - EPS <= pk <= bracket(ls, interval)[1] + EPS
                   for ls, pk in zip(lives, tl.peak_activations))
    return in_range and max(tl.peak_activations) == PUBLISHED_PEAK[name](p)


v_rows, v_table = [], {}
for p_v in (4, 8, 16):
    base = simulate(build("1f1b", p_v, 6 * p_v), unit)
    for name in V_NAMES:
        tl, interval, lives = v_measure(name, p_v)
        low, high = bracket(lives[0], interval)
        v_table[name, p_v] = (max(tl.peak_activations), max(tl.idle) / max(base.idle))
        v_rows.append(f"| {name} | {p_v} | {lives[0][0]:g}, {lives[0][1]:g} | {interval:g} | {low:g} | {high:g} | "
                      f"{tl.peak_activations[0]:g} | {max(tl.peak_activations):g} | {max(tl.peak_activations) / p_v:.2f} | "
                      f"{max(tl.idle) / max(base.idle):.2f} |")
md(text("v-head", slot=unit.f / 2) + "\n" + "\n".join(v_rows))
v_sweep = sweep(v_rule, {"name": list(V_NAMES), "p": (2, 16)}, n=24, seed=9)
trade_off = all(v_table["v-min", q][0] < v_table["v-half", q][0] < v_table["v-zb", q][0]
                and v_table["v-min", q][1] > v_table["v-half", q][1] > v_table["v-zb", q][1] for q in (4, 8, 16))
md(claim(v_sweep.holds and trade_off, text("v-bracket", checked=v_sweep.checked), table=v_table,
         **v_sweep.figures()))

# %% [text] reveal-v-share
# ~~ zh 3c423821
# chunk $c$ 的 F 在第 $c\delta$ 格左右；这个 micro-batch 还要走 $2p-1-c$ 个 chunk 再原路回来，chunk $c$ 的 lifespan 约 $2(2p-1-c)\delta$ 格。rank $r$ 的两个 chunk 是 $c=r$ 和 $c=2p-1-r$，加起来约 $2(2p-1)\delta \approx 4p\delta$ 格，与 $r$ 无关：V 形放置让一个 chunk 的长 lifespan 配上另一个的短 lifespan，每个 rank 一样多。$T = 6$ 格、每个 chunk 半个 stage，峰值约 $4p\delta / (2 \cdot 6) = p\delta/3$ 个 stage 的激活，是 1F1B 的 $\delta/3$：V-Min 约 1/3，V-Half 约 1/2；V-ZB 的 offset 平均是 3，正好和 1F1B 一样。库里的 block 从 $p=16$ 到 $p=64$，rank 0 的总 lifespan 每多一个 stage 长 {slope_min:g} 格（V-Min）、{slope_half:g} 格（V-Half）和 {slope_zb:g} 格（V-ZB），即 1F1B 的 {share_min:.3f}、{share_half:.3f} 和 {share_zb:.3f}。小 $p$ 时常数项和撞车挪出的格子占得多，上表的比例因此偏高。
# ~~ en 836e0976
# Chunk $c$'s F sits around slot $c\delta$; the micro-batch still travels $2p-1-c$ chunks and comes back the same way, so chunk $c$'s lifespan is about $2(2p-1-c)\delta$ slots. Rank $r$'s two chunks are $c=r$ and $c=2p-1-r$, together about $2(2p-1)\delta \approx 4p\delta$ slots, whatever $r$: the V placement pairs one chunk's long lifespan with the other's short one, the same total on every rank. With $T = 6$ slots and half a stage per chunk, the peak is about $4p\delta / (2 \cdot 6) = p\delta/3$ stages' activations, $\delta/3$ of 1F1B's: about 1/3 for V-Min and 1/2 for V-Half; V-ZB's offsets average 3, exactly 1F1B's memory. In the library's blocks, from $p=16$ to $p=64$, rank 0's total lifespan grows by {slope_min:g} slots per extra stage (V-Min), {slope_half:g} (V-Half) and {slope_zb:g} (V-ZB): {share_min:.3f}, {share_half:.3f} and {share_zb:.3f} of 1F1B. At small $p$ the constant terms and the slots lost to collisions weigh more, which is why the table's ratios are higher.

# %%
def rank0_lifespan(name, p):
    """Rank 0's two chunks' lifespans added up, in slots, in the library's block for p ranks."""
    slot = block(name, p)
    return sum(slot["W", s] + 1 - slot["F", s] for s in (0, 2 * p - 1))


slopes = {name: (rank0_lifespan(name, 64) - rank0_lifespan(name, 16)) / 48 for name in V_NAMES}
v_shares = {name: s / (2 * PERIOD) for name, s in slopes.items()}
md(reveal(guess_v_shares, [round(v_shares["v-min"], 3), round(v_shares["v-half"], 3)],
          claim(close(v_shares["v-min"], 1 / 3) and close(v_shares["v-half"], 1 / 2) and close(v_shares["v-zb"], 1),
                text("reveal-v-share", slope_min=slopes["v-min"], slope_half=slopes["v-half"],
                     slope_zb=slopes["v-zb"], share_min=v_shares["v-min"], share_half=v_shares["v-half"],
                     share_zb=v_shares["v-zb"]), slopes=slopes)))

# %% [markdown] byte-budget
# ~~ zh e9968314
# ### 6.2 按字节设计：给定显存预算，选调度
#
# 回到第 2.1 节的 GPT-3 175B（$p=8$、$m=32$、TP=8 + SP）。一块 GPU 的预算先要扣掉权重、梯度和 Adam 状态：这部分与调度无关，只是 V 形放置把 embedding 和 lm_head 都放到了 rank 0。剩下的才给激活；除以一个 stage 一个 micro-batch 的激活字节，就是 building block 允许的峰值份数，再由 $\lceil l/T \rceil$ 选 offset。另一个旋钮是激活重计算：选择性（selective）不存注意力分数，完全（full）每层只存输入，都拿计算时间换显存。下一格把六个调度和三种激活重计算都算一遍：每个 rank 的峰值字节来自模拟的时间线（拆分反向的用第 2.1 节算出的真实 `w_mem`），每步时间来自按浮点运算次数算出的 F、B、W（每块 GPU 每秒 400 万亿次，不计通信，同 `course.memory.fit_layouts`）。
# ~~ en af428a35
# ### 6.2 Designing in bytes: pick a schedule for a memory budget
#
# Back to section 2.1's GPT-3 175B ($p=8$, $m=32$, TP=8 + SP). A GPU's budget first loses the weights, gradients and Adam states: they do not depend on the schedule, except that the V placement puts both the embedding and lm_head on rank 0. What is left goes to activations; divided by one micro-batch's activation bytes on one stage, it is the peak the building block may reach, and $\lceil l/T \rceil$ then picks the offsets. The other knob is activation recomputation: selective recomputation drops the attention scores and full recomputation keeps only each layer's input, both trading compute time for memory. The next cell works out all six schedules under all three recomputation settings: each rank's peak bytes come from the simulated timeline (the split-backward schedules with section 2.1's real `w_mem`), the step time from F, B and W computed from FLOPs (400 TFLOP/s per GPU, no communication, as in `course.memory.fit_layouts`).

# %% [text] budget-head
# ~~ zh 9cd49ab3
# | 调度 | 激活重计算 | 最忙 rank 的峰值 | 每步时间 |
# |---|---|---|---|
# ~~ en be7bb47f
# | schedule | recomputation | busiest rank's peak | step time |
# |---|---|---|---|

# %% [text] budget-80
# ~~ zh dc46dcd5
# 预算 80 GB 时，装得下而且最快的是 **{best} + {best_rc}**（{best_step:.2f} s，最忙的 rank {best_peak:.1f} GB）：显存和 ZB-H1 差不多，bubble 占比却只有 {best_bubble:.1%}（ZB-H1 是 {h1_bubble:.1%}）；ZB-H2 不做激活重计算要 {h2_peak:.1f} GB，装不下。
# ~~ en 700f8222
# With 80 GB the fastest combination that fits is **{best} + {best_rc}** ({best_step:.2f} s, busiest rank {best_peak:.1f} GB): about ZB-H1's memory, with a bubble fraction of only {best_bubble:.1%} (ZB-H1: {h1_bubble:.1%}). ZB-H2 without recomputation needs {h2_peak:.1f} GB and does not fit.

# %%
SCHEDULES = ("1f1b", "zb-h1", "zb-h2") + V_NAMES
RECOMPUTE = ("none", "selective", "full")
FLOPS = 400e12
budget_cfgs = {rc: ActivationConfig(2048, 1, 8, True, rc) for rc in RECOMPUTE}
designs = {}
for rc, cfg in budget_cfgs.items():
    for name in SCHEDULES:
        plan = build(name, 8, 32)
        f_s, b_s, w_s = chunk_times(GPT3, cfg, plan.chunks, FLOPS)
        designs[name, rc] = pipeline_memory(plan, GPT3, cfg, Costs(f=f_s, b=b_s, w=w_s, w_mem=w_mem_share(GPT3, cfg)))
by_step = sorted(designs, key=lambda k: designs[k].timeline.makespan)
md(text("budget-head") + "\n"
   + "\n".join(f"| {name} | {rc} | {max(designs[name, rc].peak) / 1e9:.1f} GB | {designs[name, rc].timeline.makespan:.3f} s |"
               for name, rc in by_step))


def fastest_within(budget):
    """The (schedule, recomputation) with the shortest step whose busiest rank fits in ``budget`` bytes."""
    return next((k for k in by_step if max(designs[k].peak) <= budget), None)


best80 = fastest_within(80e9)
md(claim(best80 == ("v-zb", "none") and max(designs["zb-h2", "none"].peak) > 80e9
         and designs[best80].timeline.bubble_ratio < designs["zb-h1", "none"].timeline.bubble_ratio,
         text("budget-80", best=best80[0], best_rc=best80[1], best_step=designs[best80].timeline.makespan,
              best_peak=max(designs[best80].peak) / 1e9, h2_peak=max(designs["zb-h2", "none"].peak) / 1e9,
              best_bubble=designs[best80].timeline.bubble_ratio, h1_bubble=designs["zb-h1", "none"].timeline.bubble_ratio),
         best=best80))

# %% [markdown] explore-budget
# ~~ zh ef526af4
# 自己试：选调度和激活重计算，拖动预算 `budget`（GB），看每个 rank 的柱子有没有越过虚线，标题里是每步时间。
# ~~ en 00363975
# Try it: pick a schedule and a recomputation setting, drag the `budget` (GB), and watch whether any rank's bar crosses the dashed line; the title gives the step time.

# %%
def budget_explorer(fig, schedule, recompute, budget):
    pm = designs[schedule, recompute]
    verdict = "fits" if max(pm.peak) <= budget * 1e9 else "OOM"
    plots.memory_bars(pm.ranks, ax=fig.subplots(), gpu_mem=budget * 1e9,
                      title=f"{schedule}, recompute {recompute}: step {pm.timeline.makespan:.3f} s, "
                            f"busiest rank {max(pm.peak) / 1e9:.1f} GB ({verdict})")


explore(budget_explorer, figsize=(9, 3.6), schedule=list(SCHEDULES), recompute=list(RECOMPUTE),
        budget=(40.0, 90.0, 80.0, 1.0))

# %% [markdown] task-budget
# ~~ zh 130e37f1
# **任务：** 把 `budget` 拖到 50 GB，在六个调度和三种激活重计算里找出装得下、每步时间最短的组合，写成 `["调度", "激活重计算"]`，例如 `["zb-h1", "full"]`。先按份数猜一猜：每个 rank 扣掉静态部分，还剩几个 micro-batch 的激活空间？各个 block 在每个 rank 上要几份？
# ~~ en 6261b803
# **Task:** drag `budget` to 50 GB and find, among the six schedules and three recomputation settings, the combination that fits with the shortest step. Write it as `["schedule", "recomputation"]`, for example `["zb-h1", "full"]`. Guess first by counting: once each rank's static part is taken, how many micro-batches' activations is there room for, and how many does each block need on each rank?

# %%
answer_budget = None    # ["schedule", "recomputation"] that fits 50 GB with the shortest step

# %% [text] reveal-budget
# ~~ zh 02113552
# 50 GB 时最快的是 **{sched} + {rc}**：{step:.2f} s，最忙的 rank {peak:.1f} GB。按份数事先就能算出来：选择性激活重计算下，一个 stage 一个 micro-batch 的激活约 {act:.2f} GB；V 形放置的 rank 0 扣掉静态的 {static0:.1f} GB（embedding 和 lm_head 都在这里）只剩 {units0:.2f} 份的空间，其余 rank 扣掉 {static1:.1f} GB 至少剩 {units1:.2f} 份。V-Min 在 $p=8$ 时各 rank 的峰值是 {vmin_peaks} 份，处处装得下；V-Half 每个 rank 都要 {vhalf_peak:g} 份，rank 0 装不下。不用 V-Min，就只能上完全激活重计算：其中最快的 {full_sched} + full 要 {full_step:.2f} s，慢 {slower:.0%}。
# ~~ en 22e45291
# At 50 GB the fastest is **{sched} + {rc}**: {step:.2f} s, busiest rank {peak:.1f} GB. Counting in micro-batches predicts it beforehand: with selective recomputation one micro-batch's activations on one stage take about {act:.2f} GB; in the V placement rank 0 keeps {static0:.1f} GB of static state (the embedding and lm_head both sit there), leaving room for only {units0:.2f} of them, and the other ranks keep {static1:.1f} GB, leaving room for at least {units1:.2f}. At $p=8$ V-Min's ranks peak at {vmin_peaks} micro-batches, which fits everywhere; V-Half needs {vhalf_peak:g} on every rank, which does not fit on rank 0. Without V-Min only full recomputation is left: its fastest, {full_sched} + full, takes {full_step:.2f} s, {slower:.0%} slower.

# %%
BUDGET = 50e9
best50 = fastest_within(BUDGET)
act_stage = layer_activation_bytes(GPT3, budget_cfgs["selective"]) * GPT3.layers // 8
static_v = [r.static for r in designs["v-min", "selective"].ranks]      # the same for every V schedule
room = [(BUDGET - s) / act_stage for s in static_v]                    # micro-batches of one stage per rank
vmin_peaks = simulate(build("v-min", 8, 32)).peak_activations          # in micro-batches: the order decides
vhalf_peaks = simulate(build("v-half", 8, 32)).peak_activations
best_full = min((k for k in designs if k[1] == "full" and max(designs[k].peak) <= BUDGET),
                key=lambda k: designs[k].timeline.makespan)
step50, step_full = designs[best50].timeline.makespan, designs[best_full].timeline.makespan
md(reveal(answer_budget, list(best50),
          claim(best50 == ("v-min", "selective") and all(pk <= u for pk, u in zip(vmin_peaks, room))
                and vhalf_peaks[0] > room[0] and step_full > step50,
                text("reveal-budget", sched=best50[0], rc=best50[1], step=step50, peak=max(designs[best50].peak) / 1e9,
                     act=act_stage / 1e9, static0=static_v[0] / 1e9, units0=room[0], static1=max(static_v[1:]) / 1e9,
                     units1=min(room[1:]), vmin_peaks=rounded(vmin_peaks), vhalf_peak=vhalf_peaks[0],
                     full_sched=best_full[0], full_step=step_full, slower=step_full / step50 - 1),
                best=best50, room=room, vmin=vmin_peaks, vhalf=vhalf_peaks)))

# %% [markdown] memory-exercise
# ~~ zh 334a5e9f
# lifespan 的规则是近似：两个 chunk 的相位、B 先释放一部分（`w_mem < 1`）都会让真实的峰值偏离 $\lceil l/T \rceil$。练习 `building-block-memory` 让你从一个 building block 精确推出每个 rank 的峰值：
#
# ```bash
# python practice/judge.py start building-block-memory
# ```
# ~~ en a9f22afc
# The lifespan rule is an approximation: the two chunks' phases, and B freeing part of the activations early (`w_mem < 1`), both move the real peak away from $\lceil l/T \rceil$. The exercise `building-block-memory` asks you to derive every rank's exact peak from a building block:
#
# ```bash
# python practice/judge.py start building-block-memory
# ```

# %% [markdown] search
# ~~ zh c492d263
# ## 7. 调度是搜出来的：给定代价和显存上限，找最短的计划
#
# ZB-H1、ZB-H2 是论文里手画的示意；Zero Bubble 论文真正交给工程师的是一个**自动调度器**：量出 $F$、$B$、$W$、
# 通信时间和每个 rank 的显存上限，由程序排出计划。`course.search` 做同一件事，而且回答两个问题：找到的计划多长，
# 以及**离最优还有多远**。
#
# - 启发式（heuristic）：list scheduling，空闲的 rank 优先做已就绪的 B，显存允许时做 F，显存不够或有空隙时做 W；
#   几个变体（预热多少个前向、F 会不会推迟快要到的 B、W 只填放得下的空隙还是见缝就插）取最好的，再在关键路径上
#   做局部交换；每个留下的计划都由课程的模拟器重新算一遍。它附带一个**证明出来的下界**（lower bound）：
#   任何计划都不可能比它短（每个 rank 最早的开工时刻 + 它的全部工作，等等，见 `course.search.lower_bound`）。
# - 精确方法（exact）：把问题交给 OR-Tools 的 CP-SAT：每个算子一个 interval，每个 rank 一个 no-overlap 约束，
#   显存用 reservoir constraint，用启发式的计划做 warm start。求解器要么证明最优，要么在时限内给出最好的计划和它的下界。
#
# 显存上限的单位和 `peak_activations` 一样：一个 micro-batch 在这个 rank 的 stage 上的激活。F 分配 1 份，
# B 释放 $1 - w_\text{mem}$，W 释放剩下的 $w_\text{mem}$。搜索只在"每个 rank 一个 stage"的计划里找。
# ~~ en 822232fa
# ## 7. Schedules are searched for: the shortest plan for given costs and a memory cap
#
# ZB-H1 and ZB-H2 are the paper's hand-drawn illustrations; what the Zero Bubble paper really hands engineers is an **automatic scheduler**: measure $F$, $B$, $W$,
# the communication time and each rank's memory cap, and let a program lay out the plan. `course.search` does the same and answers two questions: how long the plan it finds is,
# and **how far it can be from the optimum**.
#
# - The heuristic: list scheduling, where an idle rank prefers a ready B, runs F when memory allows, and W when memory is short or there is a gap to fill;
#   it tries several variants (how many warm-up forwards, whether an F may delay a B that is about to arrive, whether W fills only the gaps it fits or any gap) and keeps the best, then tries local swaps
#   on the critical path; the course's simulator recomputes every plan it keeps. It comes with a **proven lower bound**:
#   no plan can be shorter (each rank's earliest start plus all its work, and more; see `course.search.lower_bound`).
# - The exact method hands the problem to OR-Tools' CP-SAT: an interval per op, a no-overlap constraint per rank,
#   a reservoir constraint for memory, and the heuristic's plan as a warm start. The solver either proves optimality or returns the best plan found within the time limit, with its bound.
#
# The cap is in the units of `peak_activations`: one micro-batch's activations on the rank's stage. F allocates 1 unit,
# B frees $1 - w_\text{mem}$ and W the remaining $w_\text{mem}$. The search looks only at plans with one stage per rank.

# %% [text] search-optimal
# ~~ zh 609ebe1d
# CP-SAT 证明了 {makespan:g} 就是最优：在每个 rank 最多 {cap:g} 份激活的约束下，没有任何计划能更短。
# ~~ en 4fed55b5
# CP-SAT proved {makespan:g} optimal: with at most {cap:g} micro-batches' activations per rank, no plan can be shorter.

# %% [text] search-not-proven
# ~~ zh 79c1d9de
# CP-SAT 在时限内没能证明最优：最好的计划 {makespan:g}，下界 {bound:g}（差 {gap:.1%}）。
# ~~ en 99eae531
# CP-SAT could not prove optimality within the time limit: best plan {makespan:g}, lower bound {bound:g} (a gap of {gap:.1%}).

# %% [text] search-heuristic-same
# ~~ zh 527a6489
# 启发式只用了 {ms:.0f} ms 就找到了同样长的计划 {makespan:g}；但它自己的下界只有 {bound:g}，光靠它只能说"离最优不超过 {gap:.1%}"，证明最优要靠求解器。
# ~~ en e60c8418
# The heuristic found an equally short plan, {makespan:g}, in only {ms:.0f} ms; but its own lower bound is only {bound:g}, so on its own it can only say "within {gap:.1%} of the optimum": proving optimality takes the solver.

# %% [text] search-heuristic-longer
# ~~ zh b4e6312d
# 启发式的计划是 {makespan:g}，比最优 {optimum:g} 长 {longer:.1%}：求解器从它出发，又找到了更短的。
# ~~ en 82ca6841
# The heuristic's plan takes {makespan:g}, {longer:.1%} longer than the optimum {optimum:g}: starting from it, the solver found a shorter one.

# %%
from course.search import search

p_s, m_s = 4, 8
costs_s = Costs(f=5, b=6, w=4, comm=1, w_mem=0.5)
cap_s = p_s                                  # 1F1B's activations
heur = search(p_s, m_s, costs_s, cap_s)
ex = search(p_s, m_s, costs_s, cap_s, exact_method=True, time_limit=20)
print(heur.plan.format())
print(f"heuristic: makespan {heur.makespan:g}, its lower bound {heur.lower_bound:g}, {heur.seconds:.2f} s")
print(f"exact:     makespan {ex.makespan:g}, lower bound {ex.lower_bound:g}, optimal={ex.optimal}, {ex.seconds:.2f} s")
md(claim(ex.optimal, text("search-optimal", makespan=ex.makespan, cap=cap_s),
         otherwise=text("search-not-proven", makespan=ex.makespan, bound=ex.lower_bound, gap=ex.gap),
         makespan=ex.makespan, bound=ex.lower_bound)
   + " " + claim(heur.makespan <= ex.makespan + EPS,
                 text("search-heuristic-same", ms=heur.seconds * 1000, makespan=heur.makespan, bound=heur.lower_bound,
                      gap=heur.gap),
                 otherwise=text("search-heuristic-longer", makespan=heur.makespan, optimum=ex.makespan,
                                longer=heur.makespan / ex.makespan - 1),
                 heuristic=heur.makespan, exact=ex.makespan))

# %% [markdown] explore-search
# ~~ zh 8698f17f
# 自己调：固定 $p=4$、$m=8$、$F=1$、$w_\text{mem}=0.5$，拖动 `b`、`w` 和显存上限 `cap`，看搜到的计划、它的 makespan、
# 下界、是否被证明最优。勾上 `exact` 让 CP-SAT（限时 3 秒）来证明。上限越紧，前向越早被 B 和 W "卡住"。
# ~~ en dcc4ba19
# Try it: with $p=4$, $m=8$, $F=1$ and $w_\text{mem}=0.5$ fixed, drag `b`, `w` and the cap `cap`, and watch the plan found, its makespan,
# its lower bound, and whether it is proven optimal. Tick `exact` to let CP-SAT (3-second limit) prove it. The tighter the cap, the sooner the forwards get stuck behind B's and W's.

# %%
def search_explorer(fig, b, w, cap, exact):
    c = Costs(f=1, b=b, w=w, w_mem=0.5)
    res = search(4, 8, c, cap, exact_method=exact, time_limit=3 if exact else None)
    tl = simulate(res.plan, c)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    verdict = "proven optimal" if res.optimal else f"gap <= {res.gap:.1%}"
    method = "no OR-Tools, heuristic" if "exact_unavailable" in res.details else res.method   # the browser edition
    plots.gantt(tl, ax=left, labels=False,
                title=f"{method}: makespan {res.makespan:.4g}, bound {res.lower_bound:.4g} ({verdict})")
    plots.memory(tl, ax=right, title=f"activations (cap {cap:g})")
    right.axhline(cap, color="red", linestyle="--", linewidth=1)


explore(search_explorer, figsize=(12, 3.8), b=(0.5, 3.0, 1.0, 0.25), w=(0.25, 2.0, 1.0, 0.25),
        cap=(1.0, 8.0, 4.0, 0.5), exact=False)

# %% [markdown] task-cap
# ~~ zh 537f991b
# **任务：** 保持 `b = 1`、`w = 1`，把 `cap` 从 8 往下拖。显存上限大到一定程度以后，再多给显存计划也不会变短。
# 找出让 makespan 比 `cap = 8` 时更长的**最大**的 `cap`（滑块上 0.5 一格），写进 `answer_cap`。
# ~~ en a460fc51
# **Task:** keep `b = 1` and `w = 1` and drag `cap` down from 8. Beyond some cap, more memory no longer makes the plan shorter.
# Find the **largest** `cap` (the slider moves in steps of 0.5) whose makespan is longer than at `cap = 8`, and write it into `answer_cap`.

# %%
answer_cap = None       # the largest cap on the slider whose searched makespan exceeds the one at cap 8

# %% [text] reveal-cap
# ~~ zh 577897c6
# 上限 {tight:g} 时计划还要更长；从 {next:g} 份起，搜到的 makespan 就是显存充裕时的 {roomy:g}：多出来的显存已经没有可以换的时间了。
# ~~ en 5ae69da2
# At a cap of {tight:g} the plan is still longer; from {next:g} on, the search finds the {roomy:g} of ample memory: extra memory has no more time to buy.

# %%
slider_caps = [1.0 + 0.5 * k for k in range(15)]
by_cap = {c: search(4, 8, Costs(f=1, b=1, w=1, w_mem=0.5), c).makespan for c in slider_caps}
roomy = by_cap[8.0]
tight = max(c for c in slider_caps if by_cap[c] > roomy + EPS)
md(reveal(answer_cap, tight, claim(all(abs(by_cap[c] - roomy) < EPS for c in slider_caps if c > tight),
          text("reveal-cap", tight=tight, next=tight + 0.5, roomy=roomy), by_cap=by_cap)))

# %% [markdown] same-memory
# ~~ zh 5c88c49d
# ### 同样的显存，谁赢？
#
# 把手画的调度和搜索放在**同样的显存**下比：ZB-H1 用 $p$ 份激活，ZB-H2 用 $2p-1$ 份，V-Half（第 6 节）更少。对每个调度，先用模拟器量出它的峰值激活，再让搜索在这个上限下找最短的计划（搜索只在"每个 rank 一个 stage"的计划里找）。$F=W=1$，$B$ 从小于 $W$ 变到大于 $W$，`w_mem` = 0.5。
# ~~ en 4f9c1313
# ### Same memory: who wins?
#
# Put the hand-drawn schedules and the search under **the same memory**: ZB-H1 uses $p$ micro-batches' activations, ZB-H2 $2p-1$, V-Half (section 6) fewer. For each schedule, first measure its peak activations with the simulator, then let the search find the shortest plan under that cap (the search looks only at plans with one stage per rank). $F=W=1$, $B$ goes from below $W$ to above it, `w_mem` = 0.5.

# %% [text] same-memory-head
# ~~ zh a49eb503
# $p={p}, m={m}$，$F=W=1$，makespan（括号里是 V-Half 的峰值激活；"未证明"表示求解器没有证明最优）：
#
# | B | ZB-H1 (p) | 搜索 @ p | ZB-H2 (2p-1) | 搜索 @ 2p-1 | V-Half（峰值） | 搜索 @ 该峰值 | zbv (p) |
# |---|---|---|---|---|---|---|---|
# ~~ en 698b3749
# $p={p}, m={m}$, $F=W=1$, makespans (in brackets, V-Half's peak activations; "not proven" means the solver did not prove the plan optimal):
#
# | B | ZB-H1 (p) | search @ p | ZB-H2 (2p-1) | search @ 2p-1 | V-Half (peak) | search @ that peak | zbv (p) |
# |---|---|---|---|---|---|---|---|

# %% [text] not-proven
# ~~ zh b92aea04
# （未证明）
# ~~ en 62b22957
# (not proven)

# %% [text] same-memory-never-worse
# ~~ zh 183ae67b
# 每一行里，搜索在 ZB-H1、ZB-H2 各自的显存下都不比它们长：手画的调度只是搜索空间里的一个点。
# ~~ en 440379a1
# In every row the search, under ZB-H1's and ZB-H2's own memory, is never longer than they are: the hand-drawn schedules are single points of the search space.

# %% [text] same-memory-winner
# ~~ zh 15b22e7a
# 这几行里，$B \le W$ 时（B = {small}），$2p-1$ 份显存什么也买不到：上限 $p$ 下的最优计划已经一样短，ZB-H1 就够了。$B > W$ 时（B = {large}），关键路径上是一串 B，W 填不满 B 留下的空隙，预热时多做几个前向才有用：赢家换成了 ZB-H2 那样的计划。这与第 3 节的条件一致（这里 $F = W$，$B > \min(F, W)$ 就是 $B > W$）。同一个问题，代价一变，最好的调度就变了——所以要搜，而不是背。
# ~~ en 576a7a20
# In these rows, when $B \le W$ (B = {small}), $2p-1$ micro-batches of memory buy nothing: the optimal plan under a cap of $p$ is already as short, and ZB-H1 is enough. When $B > W$ (B = {large}), the critical path is a chain of B's, W's cannot fill the gaps the B's leave, and only extra warm-up forwards help: the winner becomes a plan like ZB-H2. This matches section 3's condition (here $F = W$, so $B > \min(F, W)$ is $B > W$). Same problem, different costs, a different best schedule: which is why we search instead of memorising.

# %% [text] same-memory-placement
# ~~ zh eefab3f5
# 但换了放置方式（placement）的 V 形调度在同样显存下更短：zbv 在 $p$ 份显存下胜过每个 rank 一个 stage 时证明出来的最优，V-Half 在它自己的峰值下也胜过搜索找到的最好计划。搜索只能在它的搜索空间里证明最优；空间本身（放置方式、chunk 数）也是设计的一部分。
# ~~ en 4168b3bb
# But the V-shape schedules, with another placement, are shorter under the same memory: zbv at $p$ micro-batches beats the optimum proven for one stage per rank, and V-Half beats the best plan the search finds under its own peak. The search can prove optimality only within its search space; the space itself (the placement, the number of chunks) is part of the design.

# %%
p_c, m_c = 4, 8
table = []
cmp_rows = {}
for b in (0.5, 1.0, 1.5, 2.0, 3.0):
    c = Costs(f=1, b=b, w=1, w_mem=0.5)
    got = {}
    for name in ("zb-h1", "zb-h2", "v-half", "zbv"):
        tl = simulate(build(name, p_c, m_c), c)
        got[name] = (tl.makespan, max(tl.peak_activations))
    at = {k: search(p_c, m_c, c, got[k][1]) for k in ("zb-h1", "zb-h2", "v-half")}
    cmp_rows[b] = (got, at)
    star = {k: "" if at[k].optimal else " " + text("not-proven") for k in at}
    table.append(f"| {b:g} | {got['zb-h1'][0]:g} | {at['zb-h1'].makespan:g}{star['zb-h1']} | {got['zb-h2'][0]:g} | "
                 f"{at['zb-h2'].makespan:g}{star['zb-h2']} | {got['v-half'][0]:g} ({got['v-half'][1]:g}) | "
                 f"{at['v-half'].makespan:g}{star['v-half']} | {got['zbv'][0]:g} |")
md(text("same-memory-head", p=p_c, m=m_c) + "\n" + "\n".join(table))

never_worse = all(at[k].makespan <= got[k][0] + EPS for got, at in cmp_rows.values() for k in ("zb-h1", "zb-h2"))
small_b = [b for b in cmp_rows if b <= 1]
large_b = [b for b in cmp_rows if b > 1]
proven = all(at[k].optimal for _, at in cmp_rows.values() for k in ("zb-h1", "zb-h2"))
extra_memory_useless = proven and all(abs(cmp_rows[b][1]["zb-h2"].makespan - cmp_rows[b][1]["zb-h1"].makespan) < EPS
                                      for b in small_b)
extra_memory_pays = all(cmp_rows[b][1]["zb-h2"].makespan < cmp_rows[b][1]["zb-h1"].makespan - EPS for b in large_b)
v_wins = proven and all(got["v-half"][0] < at["v-half"].makespan and got["zbv"][0] < at["zb-h1"].makespan
                        for got, at in cmp_rows.values())
md(claim(never_worse, text("same-memory-never-worse"), rows=cmp_rows)
   + "\n\n" + claim(extra_memory_useless and extra_memory_pays, text("same-memory-winner", small=small_b, large=large_b),
                    small=small_b, large=large_b)
   + "\n\n" + claim(v_wins, text("same-memory-placement"), rows=cmp_rows))

# %% [markdown] published
# ~~ zh c45a7579
# ### 与发表的结果对照
#
# 一个调度器好不好，最终要拿别人发表的数字来检验。下面三张表都由 `course.papers` 当场算出（`benchmarks/bench_papers.py` 打印同样的表并写明出处）：
#
# 1. Zero Bubble 论文（Qi 等人，ICLR 2024）的表 5：用论文实测的 F、B、W 和通信时间，在本课程的模拟器里重新算出 1F1B、ZB-H1、ZB-H2 和论文的自动调度器（显存 $2p$ 时叫 ZB-2p）的 bubble，旁边是搜索在 ZB-H1、ZB-H2 各自显存下找到的计划；
# 2. 可控显存论文（Qi 等人，NeurIPS 2024）的 V-Min、V-Half、V-ZB：发表的 bubble 和显存，与我们的 block 和同样显存下 CP-SAT 证明出来的最好计划；
# 3. DeepSeek-V3 技术报告表 2 里 ZB1P 的 bubble 公式 $(p-1)(F+B-W)$（在 1F1B 的显存下），与 CP-SAT 证明出来的最优对照。
#
# 两种 bubble 口径要分清：论文按每个 rank 从第一个操作开始到最后一个操作结束算（相当于迭代之间没有同步点），搜索最小化的是整个 makespan（有同步点）。
# ~~ en 91af928a
# ### Against the published results
#
# Whether a scheduler is any good must in the end be tested against figures others have published. The three tables below are computed on the spot by `course.papers` (`benchmarks/bench_papers.py` prints the same tables with their sources):
#
# 1. Table 5 of the Zero Bubble paper (Qi et al., ICLR 2024): with the F, B, W and communication times the paper measured, the course's simulator recomputes the bubble of 1F1B, ZB-H1, ZB-H2 and the paper's automatic scheduler (called ZB-2p at a memory of $2p$), next to the plans the search finds under ZB-H1's and ZB-H2's memory;
# 2. V-Min, V-Half and V-ZB of the controllable-memory paper (Qi et al., NeurIPS 2024): the published bubble and memory next to our blocks and to the best plan CP-SAT proves under the same memory;
# 3. ZB1P's bubble $(p-1)(F+B-W)$ at 1F1B's memory from Table 2 of the DeepSeek-V3 technical report, against the optimum CP-SAT proves.
#
# Keep the two bubble measures apart: the papers measure each rank from its first operation's start to its last operation's end (as if iterations followed each other without a barrier); the search minimises the whole makespan (with a barrier).

# %% [text] zb-table-head
# ~~ zh 61053403
# Zero Bubble 论文表 5（$p=8$ 的六个设定）：每格是"我们 / 发表"的 bubble；最后两列是有同步点时搜索在 $2p-1$ 份显存下相对 1F1B 的加速，和论文实测的 ZB-2p 吞吐提升。
#
# | 模型 | $m$ | 1F1B | ZB-H1 | ZB-H2 | ZB-2p | 搜索 @ $2p-1$（有同步点） | ZB-2p 实测 |
# |---|---|---|---|---|---|---|---|
# ~~ en 4b8f2728
# Table 5 of the Zero Bubble paper (its six settings with $p=8$): each cell is the bubble "ours / published"; the last two columns are the search's speed-up over 1F1B at a memory of $2p-1$ with a barrier, and ZB-2p's throughput gain the paper measured.
#
# | model | $m$ | 1F1B | ZB-H1 | ZB-H2 | ZB-2p | search @ $2p-1$ (barrier) | ZB-2p measured |
# |---|---|---|---|---|---|---|---|

# %% [text] zb-reproduced
# ~~ zh 8639bc87
# 这 {n} 个 bubble 与论文印出来的四位小数完全相同，包括论文自动调度器的 ZB-2p（本课程按论文 §3.1 的描述重写，`course.search.zb_auto`）。显存上限为 $p$ 时，搜索找到的计划和 ZB-H1 一样长，一行也没有更短。
# ~~ en 5556be28
# All {n} bubble rates equal the four decimals the paper prints, ZB-2p included (the paper's automatic scheduler, rewritten for the course from the description in its §3.1: `course.search.zb_auto`). Under a cap of $p$ the search's plan is exactly as long as ZB-H1 in every row; it finds nothing shorter.

# %% [text] zb-barrier
# ~~ zh 292b862b
# 有同步点时，搜索在 $2p-1$ 份显存下的计划每一行都证明是最优的，相对 1F1B 的加速是 {lo:.2f}–{hi:.2f} 倍，低于论文实测的 ZB-2p 提升（{plo:.2f}–{phi:.2f} 倍）；论文的 ZB-2p 没有同步点（第 4 节的事后校验），这部分差距有同步点的计划拿不到。
# ~~ en 5a7d9116
# With a barrier, the search's plan at a memory of $2p-1$ is proven optimal in every row, a speed-up over 1F1B of {lo:.2f}–{hi:.2f}, below the ZB-2p gains the paper measured ({plo:.2f}–{phi:.2f}). The paper's ZB-2p runs without the barrier (section 4's post-validation): that part of the gain is out of reach of any plan with a barrier.

# %%
from course import papers
from course.search import EXACT_AVAILABLE

zb_rows = papers.zero_bubble([s for s in papers.ZB_SETTINGS if s.p == 8])
kinds = ("1f1b", "zb-h1", "zb-h2", "zb-2p")
zb_lines = [f"| {r['model']} | {r['m']} | " + " | ".join(f"{r['bubble'][k]:.4f} / {r['bubble_published'][k]:.4f}"
                                                         for k in kinds)
            + f" | {r['search_gain']['2p-1']:.2f} | {r['gain_published']['zb-2p']:.2f} |" for r in zb_rows]
md(text("zb-table-head") + "\n" + "\n".join(zb_lines))
reproduced = all(round(r["bubble"][k], 4) == r["bubble_published"][k] for r in zb_rows for k in r["bubble"])
h1_at_p = all(abs(r["search_makespan"]["p"] - r["makespan"]["zb-h1"]) < 1e-6 for r in zb_rows)
gains = [r["search_gain"]["2p-1"] for r in zb_rows]
measured = [r["gain_published"]["zb-2p"] for r in zb_rows]
below = all(r["search_optimal"]["2p-1"] and r["search_gain"]["2p-1"] < r["gain_published"]["zb-2p"] for r in zb_rows)
md(claim(reproduced and h1_at_p, text("zb-reproduced", n=sum(len(r["bubble"]) for r in zb_rows)), rows=zb_rows)
   + "\n\n" + claim(below, text("zb-barrier", lo=min(gains), hi=max(gains), plo=min(measured), phi=max(measured)),
                     gains=gains, measured=measured))

# %% [text] cm-table-head
# ~~ zh d6d2b2d2
# 可控显存论文，$p={p}$、$m={m}$、$F=B=W$：bubble 按论文的口径，显存以一个完整 stage 的 micro-batch 为单位；最后一列是同样显存下、每个 rank 一个 stage 的计划里 CP-SAT 证明出来最好的那个（有同步点的口径，与倒数第二列比）。
#
# | 调度 | bubble（发表） | bubble（我们） | 显存（发表） | 显存（我们） | makespan 口径的 bubble | 同样显存下证明最优的计划 |
# |---|---|---|---|---|---|---|
# ~~ en fedd7d07
# The controllable-memory paper, $p={p}$, $m={m}$, $F=B=W$: bubble by the paper's measure, memory in micro-batches of a whole stage; the last column is the best plan with one stage per rank that CP-SAT proves under the same memory (by the makespan measure, to compare with the column before it).
#
# | schedule | bubble (published) | bubble (ours) | memory (published) | memory (ours) | bubble of the makespan | proven best plan at that memory |
# |---|---|---|---|---|---|---|

# %% [text] cm-claims
# ~~ zh 69a92aa7
# V-ZB 在 1F1B 的显存（{vzb_mem:g} 份）下没有 bubble，与发表的一致；有同步点时它的 makespan 里仍有 {vzb_mk:.1%}。V-Min 和 V-Half 的显存正好是发表的 $\lfloor (p+4)/3 \rfloor$ = {vmin:g} 和 $\lfloor (p+2)/2 \rfloor$ = {vhalf:g} 份。在这三种调度各自的显存下，CP-SAT 证明：每个 rank 一个 stage 的计划都不如它们，例如 V-Min 的显存下最好的计划 bubble 是 {best_vmin:.0%}，V-Min 只有 {vmin_mk:.0%}。放置方式本身就是省显存的办法。
# ~~ en 2023b962
# V-ZB has no bubble at 1F1B's memory ({vzb_mem:g} micro-batches), as published; with a barrier its makespan still holds {vzb_mk:.1%}. V-Min and V-Half hold exactly the published $\lfloor (p+4)/3 \rfloor$ = {vmin:g} and $\lfloor (p+2)/2 \rfloor$ = {vhalf:g} micro-batches. Under each of the three schedules' memory, CP-SAT proves that no plan with one stage per rank comes as close: at V-Min's memory the best such plan has a bubble of {best_vmin:.0%}, V-Min only {vmin_mk:.0%}. The placement itself is a way to save memory.

# %% [text] cm-vhalf
# ~~ zh 7d9f979c
# 有一行没有复现：本课程的 V-Half 是它的 building block 简单重复，没有论文对两端的重排，bubble 是 {ours:.3f}，发表的 $B/2$ 是 {published:.3f}。
# ~~ en 847456c8
# One row is not reproduced: the course's V-Half repeats its building block without the paper's reordering of the two ends, and its bubble is {ours:.3f} against the published $B/2$ of {published:.3f}.

# %% [text] no-ortools
# ~~ zh 20dc143b
# 这里没有 OR-Tools（浏览器版就没有）：上表里"证明最优"的一列是启发式的计划和它自己证明的下界，证明不了的行已经标出；这句结论要靠 CP-SAT 的证明，请在桌面版里运行这一格。
# ~~ en c39b37f2
# OR-Tools is missing here (the browser edition never has it): the table's proven-best column is the heuristic's plan with its own proven lower bound, and the rows it cannot prove are marked. This conclusion rests on CP-SAT's proofs: run this cell in the desktop edition.

# %%
# CP-SAT proves the last column; without OR-Tools (the browser edition) it is the heuristic with its proven bound.
cm_rows = {r["schedule"]: r for r in papers.controllable_memory(((4, 8),),
                                                                exact_time_limit=10 if EXACT_AVAILABLE else None)}
cm_lines = [f"| {name} | {r['bubble_published']:.3f} ({r['bubble_formula']}) | {r['bubble']:.3f} | "
            f"{r['memory_published']:g} | {r['memory']:g} | {r['makespan_bubble']:.3f} | {r['search_bubble']:.3f}"
            + ("" if r["search_optimal"] else " " + text("not-proven")) + " |" for name, r in cm_rows.items()]
md(text("cm-table-head", p=4, m=8) + "\n" + "\n".join(cm_lines))
vs = {k: cm_rows[k] for k in ("v-min", "v-half", "v-zb")}
v_memory = all(r["memory"] == r["memory_published"] for r in vs.values())
v_beat_search = all(r["search_optimal"] and r["search_bound"] > r["makespan_bubble"] for r in vs.values())
vhalf = vs["v-half"]
md(claim(vs["v-zb"]["bubble"] < 1e-9 and v_memory and v_beat_search,
         text("cm-claims", vzb_mem=vs["v-zb"]["memory"], vzb_mk=vs["v-zb"]["makespan_bubble"],
              vmin=vs["v-min"]["memory"], vhalf=vhalf["memory"], best_vmin=vs["v-min"]["search_bound"],
              vmin_mk=vs["v-min"]["makespan_bubble"]),
         otherwise=None if EXACT_AVAILABLE else text("no-ortools"), rows=vs)
   + "\n\n" + claim(vhalf["bubble"] > vhalf["bubble_published"] + 0.01,
                     text("cm-vhalf", ours=vhalf["bubble"], published=vhalf["bubble_published"]), row=vhalf))

# %% [text] zb1p-table-head
# ~~ zh 5d8b0846
# DeepSeek-V3 表 2 的 ZB1P：在 1F1B 的显存（每个 rank $p$ 份）下，一个 rank 的空闲是 $(p-1)(F+B-W)$（这里 B 是输入梯度）。$p={p}$、$m={m}$，CP-SAT 求每组代价下空闲最少的计划：
#
# | F | B | W | `w_mem` | 声称的空闲 | 证明的最少空闲 | 结论 |
# |---|---|---|---|---|---|---|
# ~~ en aa2bf386
# ZB1P in Table 2 of DeepSeek-V3: at 1F1B's memory ($p$ micro-batches per rank) a rank idles $(p-1)(F+B-W)$ (B being the input gradient here). With $p={p}$ and $m={m}$, CP-SAT finds the plan with the least idle time for each set of costs:
#
# | F | B | W | `w_mem` | claimed idle | proven least idle | verdict |
# |---|---|---|---|---|---|---|

# %% [text] verdict-optimal
# ~~ zh 4d19044b
# 公式就是最优
# ~~ en 9cc08852
# the formula is optimal

# %% [text] verdict-beaten
# ~~ zh ce04c7bc
# 有计划空闲更少
# ~~ en 5cd2d32a
# a plan idles less

# %% [text] verdict-contradicted
# ~~ zh 033b0758
# 做不到
# ~~ en 1298a63b
# impossible

# %% [text] verdict-unproven
# ~~ zh 9a40408d
# 未证明
# ~~ en 53ac0078
# not proven

# %% [text] zb1p-claims
# ~~ zh cdf7c269
# $W \le F$ 且 W 留着它那份激活（`w_mem` 为 1 或 0.37）时，公式就是证明出来的最优。B 把激活全部释放（`w_mem` 为 0）时，计划可以比公式空得更少：用 1.5B 模型的实测时间是 {beaten:g}，公式说 {claimed:g}。$W > F$ 时公式许诺的空闲是 {promise:g}，CP-SAT 证明至少要 {least:g}：这时公式不成立。
# ~~ en 02213244
# When $W \le F$ and W keeps its share of the activations (`w_mem` 1 or 0.37), the formula is the proven optimum. When B frees all of them (`w_mem` 0) a plan can idle less than the formula: {beaten:g} against {claimed:g} with the 1.5B model's measured times. When $W > F$ the formula promises {promise:g} idle, but CP-SAT proves at least {least:g}: there the formula does not hold.

# %%
zb1p = papers.zb1p_claim(cases=((1, 1, 1), papers.ZB1P_COSTS[1], (1, 1, 0.5), (1, 1, 2)))
verdicts = {"optimal": text("verdict-optimal"), "beaten": text("verdict-beaten"),
            "contradicted": text("verdict-contradicted"), "unproven": text("verdict-unproven")}
md(text("zb1p-table-head", p=4, m=8) + "\n" + "\n".join(
    f"| {r['f']:g} | {r['b']:g} | {r['w']:g} | {r['w_mem']:.2f} | {r['claimed']:g} | {r['optimum']:g} | "
    f"{verdicts[r['verdict']]} |" for r in zb1p))
kept = [r for r in zb1p if r["w"] <= r["f"] and r["w_mem"] > 0]
freed = next(r for r in zb1p if r["f"] == papers.ZB1P_COSTS[1][0] and r["w_mem"] == 0)
wide = [r for r in zb1p if r["w"] > r["f"]]
md(claim(all(r["verdict"] == "optimal" for r in kept) and freed["verdict"] == "beaten"
         and all(r["verdict"] == "contradicted" for r in wide),
         text("zb1p-claims", beaten=freed["optimum"], claimed=freed["claimed"], promise=wide[0]["claimed"],
              least=min(r["bound"] for r in wide)),
         otherwise=None if EXACT_AVAILABLE else text("no-ortools"), rows=zb1p))

# %% [markdown] summary
# ~~ zh da9b2a93
# ## 怎么讲清楚
#
# - 一个 Linear 的反向是两次矩阵乘：$\mathrm{d}X = \mathrm{d}Y\,W^\top$（B，上一个 rank 在等）和 $\mathrm{d}W = X^\top \mathrm{d}Y$
#   （W，没人等）。把 W 拆出来延后，就能用它填 bubble；代价是一部分激活（$M_W$）要留到 W 之后，本库用 `Costs.w_mem` 表示。
# - ZB-H1 把 W 挪进排空阶段，激活峰值的最大值和 1F1B 一样是 $p$（rank $r$ 是 $(p-r)M_B + r\,M_W$），
#   rank 0 的空闲从 $(p-1)(F+B+W)$ 降到 $(p-1)\max(F+B-W, B)$，$W \le F$ 时就是论文的 $(p-1)(F+B-W)$。
# - ZB-H2 多做预热前向，激活峰值最多 $2p-1$；rank 0 窗口内空闲是 $(p-1)\max(0, F+B-2W, B-F)$，
#   论文的 $(p-1)(F+B-2W)$ 要求 $B \le F$ 或 $W \le F$，$F=B=W$ 时为零。
# - "零"要说清口径：每个 rank 窗口内的空闲为零，不等于一次迭代没有 bubble；只有用事后校验去掉迭代间的同步点，
#   稳定周期才落到 $m(F+B+W)$。
# - 有同步点时 ZB-H2 也从不比 ZB-H1 慢，严格更快当且仅当 $B > \min(F, W)$：多存的激活不是只有去掉同步点才换得回时间。
# - 这些规则都在随机取的参数上逐点检查过（$p$ 取 2..8，$F$、$B$、$W$ 各取 0.5..2，范围写在各节里）。
# - 拆分要验证：真跑 ZB-H1，梯度逐个参数与单进程对齐；在模拟的设备时间下，测得的加速与模拟预测对照。
# - 显存是设计出来的：峰值约等于 $\lceil l/T \rceil$（lifespan 除以间隔）。V 形放置让每个 rank 的两个 lifespan 互补，offset 决定长短：
#   V-Min 约 1F1B 的 1/3，V-Half 约 1/2，V-ZB 和 1F1B 一样，而 $F=B=W$、$m \ge 2p-1$ 时没有 bubble。按字节设计时，先扣掉静态部分，再用剩下的份数选 block 和激活重计算。
# - 给定代价和显存上限，调度可以搜出来，并附上离最优多远的证明；但证明只在搜索空间里成立，放置方式也是设计的一部分。
#
# ## 练习
#
# - `linear-backward-split`（★★☆）：不用 autograd，手写 `torch.nn.Linear` 的 B 和 W（含 bias，输入可以有多个前导维度），
#   与 autograd 对齐。
# - `zb-h1-order`（★★★）：设计一个顺序，激活峰值不超过 $p$、makespan 达到 $m(F+B+W)+(p-1)(F+B-W)$；测试在随机的
#   F、B、W 上模拟检查，不比较某一个固定答案。
# - `zb-h2-order`（★★★）：设计一个峰值不超过 $2p-1$、每个 rank 窗口内没有空闲的顺序。
# - `building-block-memory`（★★☆）：从一个 building block（每个算子的格子、间隔、放置、每个 stage 的激活字节和 `w_mem`）
#   精确推出每个 rank 稳定阶段的峰值，测试拿模拟器在随机的 block 上核对。
# - `schedule-under-memory-cap`（★★★）：写一个调度器，任何时刻每个 rank 的激活不超过上限，makespan 在 `course.search`
#   的 1.25 倍以内。
#
# ```bash
# python practice/judge.py start linear-backward-split
# python practice/judge.py start zb-h1-order
# python practice/judge.py start zb-h2-order
# python practice/judge.py start building-block-memory
# python practice/judge.py start schedule-under-memory-cap
# ```
# ~~ en 9e10beed
# ## How to explain it
#
# - A Linear layer's backward is two matrix products: $\mathrm{d}X = \mathrm{d}Y\,W^\top$ (B, which the previous rank waits for) and $\mathrm{d}W = X^\top \mathrm{d}Y$
#   (W, which nobody waits for). Split W off and delay it, and it can fill the bubble; the price is that part of the activations ($M_W$) stays until W, which the library models as `Costs.w_mem`.
# - ZB-H1 moves W into the drain. Its largest activation peak is $p$, like 1F1B's (rank $r$ holds $(p-r)M_B + r\,M_W$),
#   and rank 0's idle time falls from $(p-1)(F+B+W)$ to $(p-1)\max(F+B-W, B)$, which is the paper's $(p-1)(F+B-W)$ when $W \le F$.
# - ZB-H2 runs extra warm-up forwards and peaks at up to $2p-1$; rank 0's idle time inside its window is $(p-1)\max(0, F+B-2W, B-F)$.
#   The paper's $(p-1)(F+B-2W)$ needs $B \le F$ or $W \le F$, and is zero when $F=B=W$.
# - Say which "zero" you mean: no idle time inside each rank's window is not an iteration without bubble; only post-validation, which removes the barrier between iterations,
#   brings the steady-state period down to $m(F+B+W)$.
# - With a barrier, ZB-H2 is still never slower than ZB-H1, and strictly faster exactly when $B > \min(F, W)$: its extra activations do not need the barrier gone to buy time.
# - Each of these rules was checked point by point on randomly drawn parameters ($p$ from 2 to 8, $F$, $B$ and $W$ each from 0.5 to 2; each section states its range).
# - Verify the split: running ZB-H1 for real, every parameter's gradient matches a single process, and with emulated device time the measured speed-up is compared with the simulated one.
# - Memory is designed: the peak is about $\lceil l/T \rceil$ (the lifespan over the interval). The V placement pairs each rank's two lifespans so they complement each other, and the offsets set their length:
#   V-Min about 1/3 of 1F1B, V-Half about 1/2, V-ZB as much as 1F1B but, with $F=B=W$ and $m \ge 2p-1$, without bubble. To design in bytes, take the static part off first, then pick the block and the recomputation from the number of micro-batches left.
# - Given costs and a memory cap, a schedule can be searched for, with a proof of how far from the optimum it can be; but the proof holds only inside the search space, and the placement is part of the design.
#
# ## Exercises
#
# - `linear-backward-split` (★★☆): write the B and W of `torch.nn.Linear` by hand, without autograd (with a bias, and inputs with any number of leading dimensions),
#   matching autograd.
# - `zb-h1-order` (★★★): design an order whose activations peak at no more than $p$ and whose makespan reaches $m(F+B+W)+(p-1)(F+B-W)$; the tests simulate it on random
#   F, B and W, never comparing with one fixed answer.
# - `zb-h2-order` (★★★): design an order that peaks at no more than $2p-1$ with no idle time inside any rank's window.
# - `building-block-memory` (★★☆): from a building block (each op's slot, the interval, the placement, each stage's activation bytes and `w_mem`)
#   derive every rank's exact steady-state peak; the tests check it with the simulator on random blocks.
# - `schedule-under-memory-cap` (★★★): write a scheduler that keeps every rank's activations under a cap at all times, within 1.25 times the makespan `course.search` finds.
#
# ```bash
# python practice/judge.py start linear-backward-split
# python practice/judge.py start zb-h1-order
# python practice/judge.py start zb-h2-order
# python practice/judge.py start building-block-memory
# python practice/judge.py start schedule-under-memory-cap
# ```
