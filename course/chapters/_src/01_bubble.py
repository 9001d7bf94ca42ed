# %% [markdown] intro
# ~~ zh 19ea7d12
# # 第 1 章　bubble：流水线为什么会空转
#
# 流水线并行（pipeline parallelism, PP）把模型按层的深度切成 $p$ 段（stage），每个 rank（一个进程，通常独占一块 GPU）负责一段，相邻 stage 之间只传激活和梯度。
# 为什么要切：一块 GPU 放不下大模型的参数、梯度、优化器状态和激活时，就得把模型分到多块 GPU 上。流水线切的是层，相邻 stage 之间每个 micro-batch 只传一次边界上的激活（反向传回一次梯度），比张量并行每层都要做的 all-reduce 少得多，所以能跨节点；第 8 章会把三种并行的通信量放在一起算。代价是本章的主题：bubble。
#
# 这一章回答三个问题：只有一个 batch 时流水线有多浪费；切成 micro-batch 之后浪费剩下多少（bubble 公式怎么来）；为什么不能靠无限增大 micro-batch 数把它消灭。
#
# 两个贯穿全课的词：**makespan** 指一次迭代从第一个操作开始到最后一个操作结束的总时长；**bubble** 指 rank 在这段时间里空闲的部分。中英文术语对照见[术语表](glossary.md)。
#
# ## 自测：答得上来可以跳着读
#
# 1. 整个 batch 一次送进 $p$ 个 stage 的流水线，每个 rank 的利用率是多少？
# 2. 把 batch 切成 $m$ 个 micro-batch 之后，bubble 占比的公式是什么？它从哪两段时间来？
# 3. 反向耗时是前向的 2 倍还是 3 倍，会改变 GPipe 的 bubble 占比吗？
# 4. 全局 batch 固定时，为什么 $m$ 不是越大越好？
# 5. 增大 $m$ 之后，GPipe 每个 stage 要同时存多少份激活？
#
# <details>
# <summary>参考答案（先自己想，再展开）</summary>
#
# 1. $1/p$。同一时刻只有一个 stage 手里有数据，其余 $p-1$ 个 rank 都在等。
# 2. $\dfrac{p-1}{m+p-1}$。开头 stage 一个接一个开始工作（fill，灌满），结尾一个接一个停下（drain，排空），这两段里总有 rank 空着。
# 3. 不会。每个 stage 的前向、反向耗时都一样时，makespan 是 $(m+p-1)(F+B)$，每个 rank 的有用功是 $m(F+B)$，比值与 $F:B$ 无关。
# 4. micro-batch 越多，每个 micro-batch 越小：小矩阵乘法的吞吐低，每次点对点通信和 kernel 启动的固定开销却不变。全局 batch 还受收敛性约束，不能为了流水线随意加大。
# 5. $m$ 份：GPipe 先做完全部前向再做反向，所有 micro-batch 的激活都要留到各自的反向（GPipe 论文靠激活重计算才放得下）。第 2 章的 1F1B 把它降到最多 $\min(m, p)$ 份。
#
# </details>
# ~~ en 75f1b8fa
# # Chapter 1. The bubble: why a pipeline sits idle
#
# Pipeline parallelism (PP) cuts a model by depth into $p$ consecutive pieces called stages. Each rank (one process, usually with a GPU of its own) runs one stage, and neighbouring stages exchange only activations and gradients.
# Why cut at all: when one GPU cannot hold a large model's parameters, gradients, optimizer states and activations, the model has to be spread over several GPUs. A pipeline cuts between layers, so for each micro-batch a stage sends its neighbour one boundary activation forward and receives one gradient back. That is far less traffic than tensor parallelism's all-reduce in every layer, which is why pipelines can span nodes; chapter 8 puts the traffic of the three kinds of parallelism side by side. The price is this chapter's subject: the bubble.
#
# The chapter answers three questions. How wasteful is a pipeline that gets the whole batch at once? How much waste is left once the batch is split into micro-batches, and where does the bubble formula come from? And why can't we make the bubble vanish by raising the number of micro-batches without limit?
#
# Two words run through the whole course: the **makespan** is the time from the start of an iteration's first operation to the end of its last, and the **bubble** is the part of it during which a rank sits idle. The [glossary](../glossary.md) pairs every term with its Chinese counterpart.
#
# ## Self-test: skip ahead if you can answer these
#
# 1. If the whole batch goes through a $p$-stage pipeline at once, what is each rank's utilisation?
# 2. Once the batch is split into $m$ micro-batches, what fraction of the iteration is bubble? Which two stretches of time does it come from?
# 3. Does it change GPipe's bubble fraction whether the backward takes twice or three times as long as the forward?
# 4. With the global batch fixed, why is a larger $m$ not always better?
# 5. As $m$ grows, how many micro-batches' activations must each GPipe stage hold at once?
#
# <details>
# <summary>Answers (think first, then open)</summary>
#
# 1. $1/p$. At any moment only one stage has data to work on; the other $p-1$ ranks wait.
# 2. $\dfrac{p-1}{m+p-1}$. At the start the stages begin work one after another (fill); at the end they stop one after another (drain). During both stretches some ranks are idle.
# 3. No. When every stage takes the same time per forward and per backward, the makespan is $(m+p-1)(F+B)$ and each rank's useful work is $m(F+B)$; their ratio does not depend on $F:B$.
# 4. More micro-batches means smaller micro-batches. Small matrix multiplications run at low throughput, while the fixed cost of each point-to-point transfer and kernel launch stays the same. The global batch is also set by convergence, not by the pipeline.
# 5. All $m$: GPipe runs every forward before any backward, so every micro-batch's activations stay until its backward (the GPipe paper fits them only with activation recomputation). Chapter 2's 1F1B brings this down to at most $\min(m, p)$.
#
# </details>

# %%
from course import figure, plots, recordings
from course.chapter import md, open_chapter
from course.claims import claim, reveal
from course.costs import Costs
from course.schedules import build
from course.sim import simulate
from course.widgets import explore

text = open_chapter("01_bubble")

# %% [markdown] one-batch
# ~~ zh fc187127
# ## 1. 一个 batch 走完整条流水线：利用率 $1/p$
#
# 先用本课程的模拟器看最朴素的做法：整个 batch 作为一个 micro-batch（$m=1$）。`build("gpipe", p, m)` 生成每个 rank 的操作顺序（一个 *plan*），`simulate` 按依赖关系排出时间线。时间单位是抽象的代价单位（cost unit），各操作的耗时取 `Costs()` 的默认值：
# ~~ en 669bd3bf
# ## 1. One batch through the whole pipeline: utilisation $1/p$
#
# Start with the course's simulator and the most naive approach: the whole batch as a single micro-batch ($m=1$). `build("gpipe", p, m)` produces each rank's order of operations (a *plan*), and `simulate` lays it out in time according to the dependencies. Time is measured in abstract cost units; each operation takes the default duration of `Costs()`:

# %% [text] defaults
# ~~ zh e510701c
# `Costs()`：一个 stage 的前向 F = {f:g}，输入梯度 b = {b:g}，权重梯度 w = {w:g}，所以完整反向 b + w = {full:g}；点对点延迟 comm = {comm:g}。
# ~~ en e594bb26
# `Costs()`: on one stage a forward takes F = {f:g}, the input gradient b = {b:g} and the weight gradient w = {w:g}, so a full backward takes b + w = {full:g}; a point-to-point transfer adds comm = {comm:g}.

# %%
P = 4
defaults = Costs()
md(text("defaults", f=defaults.f, b=defaults.b, w=defaults.w, full=defaults.b + defaults.w, comm=defaults.comm))

# %% [markdown] predict-util
# ~~ zh 8918ceb0
# **预测：** $p$ 个 stage、整个 batch 当作一个 micro-batch，每个 rank 忙碌的时间占 makespan 的几分之几？写成一个数（例如 `0.5`）。
# ~~ en 1310bb42
# **Predict:** with $p$ stages and the whole batch as one micro-batch, what fraction of the makespan is each rank busy? Write it as a number (for example `0.5`).

# %%
guess_util = None   # your prediction

# %% [text] util
# ~~ zh c2a799ae
# 整条流水线用了 {makespan:g} 个单位，每个 rank 只忙了 {busy:g} 个单位，利用率正好是 $1/p$ = 1/{p}。灰色就是 bubble：任何时刻只有一个 rank 在干活。
# ~~ en 9afb31f2
# The pipeline takes {makespan:g} units and each rank is busy for only {busy:g} of them: a utilisation of exactly $1/p$ = 1/{p}. The grey is the bubble: at any moment only one rank is working.

# %%
one = simulate(build("gpipe", P, 1), defaults)
plots.gantt(one, title=f"p={P}, one micro-batch")
figure.show()
util = sum(one.busy) / (one.p * one.makespan)
md(reveal(guess_util, util, claim(abs(util - 1 / P) < 1e-12,
          text("util", makespan=one.makespan, busy=one.busy[0], p=P), util=util, p=P)))

# %% [markdown] micro-batches
# ~~ zh 70a225fb
# ## 2. 切成 micro-batch：让多个 stage 同时工作
#
# 把 batch 切成 $m$ 份。micro-batch 0 离开 stage 0 之后，micro-batch 1 就可以进入 stage 0，于是多个 stage 同时在算不同的 micro-batch。GPipe 的做法是先把 $m$ 个前向全部做完，再做 $m$ 个反向。
# ~~ en 11175817
# ## 2. Micro-batches: several stages at work at once
#
# Split the batch into $m$ pieces. As soon as micro-batch 0 leaves stage 0, micro-batch 1 can enter it, so several stages work on different micro-batches at the same time. GPipe runs all $m$ forwards first and then all $m$ backwards.

# %% [markdown] predict-gap
# ~~ zh 5476604c
# **预测：** 下面这条 GPipe 时间线里，rank 0 做完自己的最后一个前向之后，要空等多久才轮到它的第一个反向？用 $p$、$F$、$B$ 想一想，再代入下一格的数，写成一个数。
# ~~ en 6df91d44
# **Predict:** in the GPipe timeline below, how long does rank 0 sit idle between its last forward and its first backward? Reason with $p$, $F$ and $B$, then put in the numbers of the next cell and write a single number.

# %%
guess_gap0 = None   # your prediction (cost units)

# %% [text] gpipe-timeline
# ~~ zh 6aef4458
# $p={p}$、$m={m}$ 的 GPipe 时间线。文本形式里数字是第几个 micro-batch 的前向，字母是对应的反向（a 是 micro-batch 0），`.` 是空闲：
# ~~ en 71075fa8
# GPipe with $p={p}$ and $m={m}$. In the text view a digit is the forward of that micro-batch, a letter its backward (a is micro-batch 0) and `.` is idle time:

# %% [text] gap0
# ~~ zh 7a5b57e0
# rank 0 的前向在 {end:g} 做完，第一个反向在 {start:g} 才开始，中间空了 $(p-1)(F+B)$ = {gap0:g}：最后一个 micro-batch 的前向要再走 $p-1$ 个 stage，它的梯度还要走回来。rank 0 的 bubble 全在中间，开头和结尾一点都没有。
# ~~ en bfbf3088
# Rank 0 finishes its forwards at {end:g} and starts its first backward only at {start:g}, an idle gap of $(p-1)(F+B)$ = {gap0:g}: the last micro-batch's forward still has $p-1$ stages to go, and its gradient has to come all the way back. Rank 0's bubble sits entirely in the middle, none of it at the start or the end.

# %% [text] gpipe-bubble
# ~~ zh a7ef2b21
# makespan 是 **{makespan:g}** 个单位，bubble 占比 **{bubble:.1%}**，比 $m=1$ 时的 {one:.0%} 小得多。空闲落在三块里：左上角是前向的灌满（fill）；中间一块是前向的排空（drain）接上反向的灌满，rank 0 那一行最宽；右下角是反向的排空。前向、反向各自的稳定阶段里所有 rank 都在忙。
# ~~ en 465e1064
# The makespan is **{makespan:g}** units and the bubble fraction **{bubble:.1%}**, far below the {one:.0%} of $m=1$. The idle time falls into three blocks: top left, the forwards filling the pipeline; in the middle, the forwards draining followed by the backwards filling, widest on rank 0; bottom right, the backwards draining. In the steady state of the forwards and of the backwards every rank is busy.

# %%
M = 8
gp = simulate(build("gpipe", P, M), defaults)
md(text("gpipe-timeline", p=P, m=M))
print(plots.ascii_timeline(gp))
plots.gantt(gp)
figure.show()


def idle_parts(tl, r):
    """Rank r's idle time in the iteration: before its first op, between ops, after its last op."""
    starts, ends = tl.starts[r], tl.ends[r]
    head = starts[0] - tl.start
    tail = tl.start + tl.makespan - ends[-1]
    return head, ends[-1] - starts[0] - tl.busy[r], tail


last_f = max(i for i, step in enumerate(gp.steps[0]) if step.kind == "F")
gap0 = gp.starts[0][last_f + 1] - gp.ends[0][last_f]
F_, B_ = defaults.f, defaults.b + defaults.w
md(reveal(guess_gap0, gap0, claim(abs(gap0 - (P - 1) * (F_ + B_)) < 1e-12,
          text("gap0", end=gp.ends[0][last_f], start=gp.starts[0][last_f + 1], gap0=gap0), gap0=gap0)))
md(claim(gp.bubble_ratio < one.bubble_ratio and M >= P,
         text("gpipe-bubble", makespan=gp.makespan, bubble=gp.bubble_ratio, one=one.bubble_ratio),
         gpipe=gp.bubble_ratio, one=one.bubble_ratio))

# %% [markdown] derive
# ~~ zh 5b70ac3b
# ## 3. 推导 bubble 公式
#
# 设每个 stage 的前向耗时 $F$、反向耗时 $B$，各 stage 一样。
#
# - 前向阶段：micro-batch $i$ 在 stage $s$ 的前向最早在 $(i+s)F$ 开始。最后一个前向（micro-batch $m-1$ 在 stage $p-1$）在 $(m+p-1)F$ 结束。
# - 反向阶段与之对称：从最后一个 stage 开始往回传，再走 $(m+p-1)B$。
# - 所以 makespan $T = (m+p-1)(F+B)$。
#
# 每个 stage 真正在算的时间是 $m(F+B)$，$p$ 个 stage 一共 $p\,m(F+B)$；"rank 数 × makespan" 这个矩形里剩下的就是 bubble：
#
# $$\text{bubble} = 1 - \frac{p\,m\,(F+B)}{p\,(m+p-1)(F+B)} = \frac{p-1}{m+p-1}.$$
#
# $F+B$ 被约掉了：bubble 占比只取决于 $p$ 和 $m$。
#
# 每个 rank 空的都是 $(p-1)(F+B)$，只是位置不同。GPipe 的 stage $s$：
#
# - 开头等 $sF$：micro-batch 0 的前向要先走过前面 $s$ 个 stage；
# - 中间等 $(p-1-s)(F+B)$：做完最后一个前向后，这个 micro-batch 还要往后走 $p-1-s$ 个 stage，梯度再走回来；
# - 结尾等 $sB$：最后一个反向还要往前传 $s$ 个 stage。
#
# 三段加起来 $sF + (p-1-s)(F+B) + sB = (p-1)(F+B)$。下一格从时间线上逐个 rank 量出这三段：
# ~~ en 311d8b31
# ## 3. Deriving the bubble formula
#
# Let every stage take $F$ per forward and $B$ per backward.
#
# - Forwards: micro-batch $i$ can start its forward on stage $s$ at $(i+s)F$ at the earliest. The last forward (micro-batch $m-1$ on stage $p-1$) ends at $(m+p-1)F$.
# - Backwards mirror this, running from the last stage back to the first in another $(m+p-1)B$.
# - So the makespan is $T = (m+p-1)(F+B)$.
#
# Each stage computes for $m(F+B)$, all $p$ stages together for $p\,m(F+B)$. What is left of the rectangle "number of ranks × makespan" is the bubble:
#
# $$\text{bubble} = 1 - \frac{p\,m\,(F+B)}{p\,(m+p-1)(F+B)} = \frac{p-1}{m+p-1}.$$
#
# $F+B$ cancels: the bubble fraction depends on $p$ and $m$ alone.
#
# Every rank is idle for $(p-1)(F+B)$; only where differs. In GPipe, stage $s$ waits
#
# - $sF$ at the start: micro-batch 0's forward has to pass the $s$ stages before it first;
# - $(p-1-s)(F+B)$ in the middle: after its last forward, that micro-batch still travels $p-1-s$ stages further and its gradient travels back;
# - $sB$ at the end: the last backward still has $s$ stages to go towards the front.
#
# Together $sF + (p-1-s)(F+B) + sB = (p-1)(F+B)$. The next cell measures the three parts on the timeline, rank by rank:

# %% [text] idle-table
# ~~ zh dcc4dd44
# GPipe，$p={p}$、$m={m}$、$F={f:g}$、$B={b:g}$：
#
# | stage | 开头 $sF$ | 中间 $(p-1-s)(F+B)$ | 结尾 $sB$ | 合计 |
# |---|---|---|---|---|
# ~~ en b2a225b4
# GPipe, $p={p}$, $m={m}$, $F={f:g}$, $B={b:g}$:
#
# | stage | start $sF$ | middle $(p-1-s)(F+B)$ | end $sB$ | total |
# |---|---|---|---|---|

# %% [text] idle-sum
# ~~ zh 91b35bf2
# 每一行合计都是 $(p-1)(F+B)$ = {total:g}。所以"开头和结尾的空闲才是 bubble"并不对：stage 0 的 bubble 整块夹在两个操作之间。第 8 章读实测 trace 时还会用到这一点。
# ~~ en ae3e0e4e
# Every row adds up to $(p-1)(F+B)$ = {total:g}. So "the bubble is the idle time at the start and the end" is wrong: stage 0's bubble sits entirely between two of its operations. Chapter 8 relies on this when it reads measured traces.

# %%
rows = []
for r in range(P):
    head, middle, tail = idle_parts(gp, r)
    assert abs(head - r * F_) < 1e-12 and abs(middle - (P - 1 - r) * (F_ + B_)) < 1e-12 and abs(tail - r * B_) < 1e-12
    rows.append(f"| {r} | {head:g} | {middle:g} | {tail:g} | {head + middle + tail:g} |")
md(text("idle-table", p=P, m=M, f=F_, b=B_) + "\n" + "\n".join(rows))
md(claim(all(abs(sum(idle_parts(gp, r)) - (P - 1) * (F_ + B_)) < 1e-12 for r in range(P)),
         text("idle-sum", total=(P - 1) * (F_ + B_))))

# %% [markdown] verify
# ~~ zh 7b67f761
# 公式是推出来的，下一格让模拟器在一片参数上逐一核对（包括反向是前向 3 倍的情形），两种调度都算：
# ~~ en 48f54b6b
# The formula was derived by hand. The next cell has the simulator check it over a whole range of parameters (including a backward three times as long as the forward), for both schedules:

# %% [text] formula-checked
# ~~ zh faa44970
# 核对了 **{checked}** 个 (schedule, F:B, p, m) 组合，模拟器与公式的最大差是 {worst:.1e}：公式在各 stage 耗时相同时成立，并且与 F:B 无关，GPipe 和 1F1B 一样（两者的区别在显存，见第 2 章）。
# ~~ en c265e1d2
# **{checked}** combinations of (schedule, F:B, p, m) checked; the largest difference between simulator and formula is {worst:.1e}. The formula holds whenever all stages take the same time, it does not depend on F:B, and it is the same for GPipe and 1F1B (they differ in memory, see chapter 2).

# %%
def bubble_formula(p: int, m: int) -> float:
    return (p - 1) / (m + p - 1)


checked, worst = 0, 0.0
for schedule in ("gpipe", "1f1b"):
    for backward in (1.0, 2.0, 3.0):
        costs = Costs(f=1.0, b=backward, w=0.0)   # a plan without W ops runs the full backward b + w
        for p in range(1, 9):
            for m in range(1, 33):
                tl = simulate(build(schedule, p, m), costs)
                worst = max(worst, abs(tl.bubble_ratio - bubble_formula(p, m)))
                assert abs(tl.makespan - (m + p - 1) * (1 + backward)) < 1e-9
                checked += 1
md(claim(worst < 1e-12, text("formula-checked", checked=checked, worst=worst), worst=worst))

# %% [markdown] two-measures
# ~~ zh b9660205
# ### 两种 bubble 口径
#
# 读论文时会碰到另一个公式。上面的 $\frac{p-1}{m+p-1}$ 是**迭代口径**：空闲占"rank 数 × makespan"这个矩形的比例。
# Megatron-LM 的论文（Narayanan et al., 2021）、Hugging Face 的 Ultra-Scale Playbook 和 Zero Bubble 的 README 写的是
# $\frac{p-1}{m}$，它是**理想时间口径**：bubble 时间除以理想的计算时间 $m(F+B)$，也就是每个 rank 的 $(p-1)(F+B)$ 除以它的 $m(F+B)$。
# 两者说的是同一段空闲，分母不同：前者不超过 1，后者在 $m < p-1$ 时可以大于 1。
# ~~ en 1fc3e9dc
# ### Two ways to measure the bubble
#
# Papers use another formula too. The $\frac{p-1}{m+p-1}$ above measures the bubble **against the iteration**: idle time as a share of the rectangle "number of ranks × makespan".
# The Megatron-LM paper (Narayanan et al., 2021), Hugging Face's Ultra-Scale Playbook and the Zero Bubble README write
# $\frac{p-1}{m}$, which measures it **against the ideal time**: bubble time divided by the ideal compute time $m(F+B)$, that is, each rank's $(p-1)(F+B)$ over its $m(F+B)$.
# Both describe the same idle time with different denominators: the first never exceeds 1, the second exceeds 1 when $m < p-1$.

# %% [markdown] predict-megatron
# ~~ zh 9506d952
# **预测：** $p=4$、$m=8$ 时，按 Megatron 的口径，bubble 是多少？（写成小数）
# ~~ en 73de8071
# **Predict:** with $p=4$ and $m=8$, what is the bubble measured Megatron's way? (Write a decimal.)

# %%
guess_megatron = None   # your prediction

# %% [text] megatron
# ~~ zh 302901ad
# 同一条时间线：每个 rank 的空闲 / 忙碌 = {x:.3f} = $(p-1)/m$ = {p1}/{m}；空闲 / (rank 数 × makespan) = {ratio:.3f} = $(p-1)/(m+p-1)$ = {p1}/{mp1}。两者的换算：$\frac{{p-1}}{{m+p-1}} = \frac{{x}}{{1+x}}$，其中 $x = \frac{{p-1}}{{m}}$。
# ~~ en f6a672f7
# The same timeline: each rank's idle / busy = {x:.3f} = $(p-1)/m$ = {p1}/{m}; idle / (number of ranks × makespan) = {ratio:.3f} = $(p-1)/(m+p-1)$ = {p1}/{mp1}. One converts into the other: $\frac{{p-1}}{{m+p-1}} = \frac{{x}}{{1+x}}$ with $x = \frac{{p-1}}{{m}}$.

# %%
megatron = [(gp.makespan - gp.busy[r]) / gp.busy[r] for r in range(P)]   # each rank: bubble time / ideal compute
assert all(abs(x - (P - 1) / M) < 1e-12 for x in megatron)
md(reveal(guess_megatron, megatron[0], claim(abs(gp.bubble_ratio - (P - 1) / (M + P - 1)) < 1e-12,
          text("megatron", x=megatron[0], p1=P - 1, m=M, ratio=gp.bubble_ratio, mp1=M + P - 1),
          megatron=megatron[0], ratio=gp.bubble_ratio)))

# %% [markdown] bubble-vs-m
# ~~ zh 2df2b995
# ### bubble 随 $m$ 下降
#
# 固定 $p=4$，把 $m$ 翻倍几次，比较模拟结果与公式：
# ~~ en 536411fb
# ### The bubble shrinks as $m$ grows
#
# Fix $p=4$, double $m$ a few times, and compare the simulation with the formula:

# %% [text] m-table
# ~~ zh 2ca5907e
# | m | makespan | bubble（模拟） | (p-1)/(m+p-1) |
# |---|---|---|---|
# ~~ en 699407d8
# | m | makespan | bubble (simulated) | (p-1)/(m+p-1) |
# |---|---|---|---|

# %% [text] halving
# ~~ zh 6e168fbd
# $m$ 翻倍，bubble 大约减半，但不是正好减半：把 $p={p}, m={m}$ 的 {bubble:.1%} 降一半，需要 $m={m_half}$，而不是 {double}。要让 bubble 不超过 10%，需要 $m \ge 9(p-1)$：$p={p}$ 时模拟器找到的最小 $m$ 是 {m_10}。按 Megatron 的口径 $(p-1)/m$，同一个 $m$ 的 bubble 是 {megatron_10:.1%}。
# ~~ en f982b7d5
# Doubling $m$ roughly halves the bubble, but not exactly: halving the {bubble:.1%} of $p={p}, m={m}$ takes $m={m_half}$, not {double}. Keeping the bubble at or below 10% takes $m \ge 9(p-1)$: for $p={p}$ the smallest $m$ the simulator finds is {m_10}. Measured Megatron's way, $(p-1)/m$, the bubble at that $m$ is {megatron_10:.1%}.

# %%
rows = []
for m in (4, 8, 16, 32):
    tl = simulate(build("1f1b", P, m), Costs())
    rows.append(f"| {m} | {tl.makespan:g} | {tl.bubble_ratio:.1%} | {bubble_formula(P, m):.1%} |")
md(text("m-table") + "\n" + "\n".join(rows))
m_half = 2 * M + P - 1   # the m that halves the bubble of (P, M): (P-1)/(m+P-1) = (P-1)/(2(M+P-1))
m_10 = next(m for m in range(1, 1000) if simulate(build("1f1b", P, m)).bubble_ratio <= 0.1 + 1e-12)
md(claim(abs(bubble_formula(P, m_half) - bubble_formula(P, M) / 2) < 1e-12 and m_10 == 9 * (P - 1),
         text("halving", p=P, m=M, bubble=bubble_formula(P, M), m_half=m_half, double=2 * M, m_10=m_10,
              megatron_10=(P - 1) / m_10), m_half=m_half, m_10=m_10))

# %% [markdown] explore
# ~~ zh fd7a7ae9
# ## 4. 自己拖一拖
#
# 左图是公式给出的 bubble 曲线（几条不同的 $p$），黑点是当前的 $(p, m)$；右图是模拟器画出的 1F1B 时间线。
# 改 `backward`（反向相对前向的耗时）：右边的时间线变长了，左边的 bubble 占比不变。
# ~~ en 166faa01
# ## 4. Try it yourself
#
# On the left, the bubble curves the formula gives for a few values of $p$, with a black dot at the current $(p, m)$; on the right, the 1F1B timeline the simulator draws.
# Change `backward` (the backward's duration relative to the forward's): the timeline on the right stretches, the bubble fraction on the left stays put.

# %%
def bubble_explorer(fig, p, m, backward):
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.6])
    plots.bubble_curves(ps=(2, 4, 8), ms=range(1, 33), ax=left, highlight=(p, m))
    tl = simulate(build("1f1b", p, m), Costs(f=1.0, b=backward, w=0.0))
    plots.gantt(tl, ax=right)


explore(bubble_explorer, figsize=(12, 3.8), p=(2, 8, 4), m=(1, 16, 8), backward=(0.5, 4.0, 2.0, 0.5))

# %% [markdown] task-min-m
# ~~ zh de2ca52e
# **任务：** 把 `p` 拖到 6，找出让 bubble 占比不超过 25% 的最小 `m`，填进下一格。
# ~~ en 8529abcf
# **Task:** drag `p` to 6 and find the smallest `m` that keeps the bubble fraction at or below 25%. Enter it in the next cell.

# %%
answer_min_m = None   # the m you found with the widget

# %% [text] min-m
# ~~ zh 5c3df234
# $p={p}$：$(p-1)/(m+p-1) \le {target:g}$ 等价于 $m \ge {p1}\cdot(1/{target:g}-1)$ = {min_m}，模拟器在 m={min_m} 给出 {bubble:.1%}。
# ~~ en d8f0c2e1
# For $p={p}$: $(p-1)/(m+p-1) \le {target:g}$ is the same as $m \ge {p1}\cdot(1/{target:g}-1)$ = {min_m}, and the simulator gives {bubble:.1%} at m={min_m}.

# %%
TASK_P, TASK_BUBBLE = 6, 0.25
min_m = next(m for m in range(1, 100) if simulate(build("1f1b", TASK_P, m)).bubble_ratio <= TASK_BUBBLE + 1e-12)
md(reveal(answer_min_m, min_m, text("min-m", p=TASK_P, target=TASK_BUBBLE, p1=TASK_P - 1, min_m=min_m,
                                    bubble=simulate(build("1f1b", TASK_P, min_m)).bubble_ratio)))

# %% [markdown] m-limits
# ~~ zh cd403d40
# ## 5. 为什么 $m$ 不能无限大
#
# 公式说 $m \to \infty$ 时 bubble 趋于 0，但有两道上限：
#
# 1. **全局 batch 是给定的。** 一次迭代处理的样本数 = 数据并行份数 × $m$ × micro-batch 大小。全局 batch 由优化（收敛、学习率）决定，不能为了流水线随意加大；$m$ 越大，每个 micro-batch 就越小。
# 2. **小矩阵乘法效率低。** micro-batch 小到一定程度，矩阵乘就从"算力受限"变成"访存和固定开销受限"，每个样本花的时间反而变长。
#
# 第 2 点在这台机器上就能量出来：固定权重 $W \in \mathbb{R}^{h\times h}$，把输入的行数（相当于 micro-batch 里的 token 数）从 1 行开始逐次翻倍，测 `x @ W` 的吞吐。
# ~~ en dc8aa881
# ## 5. Why $m$ cannot grow without limit
#
# The formula says the bubble tends to 0 as $m \to \infty$, but two limits stand in the way:
#
# 1. **The global batch is given.** The samples in one iteration = data-parallel replicas × $m$ × micro-batch size. The global batch is set by optimisation (convergence, learning rate), not by the pipeline; the larger $m$, the smaller each micro-batch.
# 2. **Small matrix multiplications are inefficient.** Below some size a matmul stops being compute-bound and becomes bound by memory traffic and fixed overheads, so each sample takes longer.
#
# The second point can be measured on this very machine: fix a weight $W \in \mathbb{R}^{h\times h}$, double the number of input rows (the tokens in a micro-batch) starting from 1, and measure the throughput of `x @ W`.

# %% [text] gflops
# ~~ zh eb90bae7
# 在这台机器上，1 行的吞吐是 **{one:.1f}** GFLOP/s，最快的 {fastest} 行是 **{best:.1f}** GFLOP/s，相差 **{ratio:.1f}** 倍：行数少时，时间花在读权重和调用开销上，而不是乘加。
# ~~ en be5e7ccc
# On this machine one row runs at **{one:.1f}** GFLOP/s and the fastest size, {fastest} rows, at **{best:.1f}** GFLOP/s: a factor of **{ratio:.1f}**. With few rows the time goes into reading the weight and into call overhead, not into multiply-adds.

# %% [text] gflops-noisy
# ~~ zh 36cc4dc9
# 在这台机器上，1 行的吞吐是 **{one:.1f}** GFLOP/s，最快的 {fastest} 行是 **{best:.1f}** GFLOP/s，这次测量里差距不到 2 倍（机器忙闲会让小矩阵的计时抖动，可以重跑一次）。
# ~~ en 31c6234d
# On this machine one row runs at **{one:.1f}** GFLOP/s and the fastest size, {fastest} rows, at **{best:.1f}** GFLOP/s: less than a factor of 2 this time (a busy machine makes the timings of small matrices jitter; run the cell again).

# %%
H = 512   # the hidden size of the recorded case "matmul-timing"
# The measurement is course/recordings/cases.py:matmul_seconds: x @ W for rows = 1, 2, 4, ..., 256 on one CPU thread
# (on a shared laptop, threads waiting for each other would measure the scheduler, not the matmul), the best time of
# repeats lasting 10 ms, best of three sweeps (a moment of load from elsewhere does not decide the curve).
# It runs live where torch is installed; without torch (the browser edition) it shows the recorded run.
seconds = recordings.run("matmul-timing")
sizes = sorted(seconds)
gflops = {n: 2 * n * H * H / seconds[n] / 1e9 for n in sizes}
fastest = max(sizes, key=gflops.get)

fig, ax = figure.subplots(figsize=(6, 3))
ax.semilogx(sizes, [gflops[n] for n in sizes], "o-", base=2)
ax.set_xlabel("rows per matmul (micro-batch tokens)")
ax.set_ylabel("GFLOP/s")
ax.set_title(f"(rows x {H}) @ ({H} x {H}), one CPU thread", fontsize=10)
figure.show()
figures = dict(one=gflops[1], fastest=fastest, best=gflops[fastest], ratio=gflops[fastest] / gflops[1])
md(claim(gflops[fastest] >= 2 * gflops[1], text("gflops", **figures), otherwise=text("gflops-noisy", **figures)))

# %% [markdown] gpu
# ~~ zh b42f7471
# GPU 上这个差距大得多：几行的矩阵填不满成千上万个计算单元，时间几乎全是 kernel 启动和读权重。
# ~~ en 60e0b451
# On a GPU the gap is far larger: a matrix of a few rows cannot fill thousands of compute units, and the time is almost all kernel launch and weight reads.

# %% [markdown] combine
# ~~ zh e21d2f98
# 把两件事放在一起：一次迭代固定处理的行数取上面量过的最大行数、$p=4$，切成 $m$ 份，每个 micro-batch 在一个 stage 上的前向耗时就用上面测到的时间（反向按 2 倍），交给模拟器算一次迭代的 makespan。$m$ 小，bubble 大；$m$ 大，每一份都算得不划算：
# ~~ en 14463f49
# Now put the two together. Fix the rows per iteration at the largest size measured above, take $p=4$, and split the rows into $m$ micro-batches; each micro-batch's forward on one stage takes the time just measured (the backward twice that), and the simulator gives the iteration's makespan. A small $m$ means a large bubble; a large $m$ means every piece is computed inefficiently:

# %% [text] best-m-middle
# ~~ zh 8b9f3536
# 两头高、中间低：最优的 $m$ 在中间。
# ~~ en 08099db9
# High at both ends, low in between: the best $m$ lies in the middle.

# %% [text] best-m-edge
# ~~ zh 2e06dcb4
# 这次测量里最优点落在了端点上（机器忙闲会让小矩阵的计时抖动，可以重跑一次看看）。
# ~~ en f4c90dff
# This time the best point landed at an end of the range (a busy machine makes the timings of small matrices jitter; run it again and see).

# %% [text] best-m
# ~~ zh 1a30bff4
# 这台机器上最快的是 **m={best}**（每个 micro-batch {rows} 行），迭代 {best_ms:.2f} ms；m=1 是 {one_ms:.2f} ms，m={last} 是 {last_ms:.2f} ms。{shape}
# ~~ en 989a51a6
# On this machine the fastest is **m={best}** ({rows} rows per micro-batch), {best_ms:.2f} ms per iteration; m=1 takes {one_ms:.2f} ms and m={last} {last_ms:.2f} ms. {shape}

# %%
GLOBAL_ROWS = sizes[-1]
ms = [m for m in sizes if m <= GLOBAL_ROWS]
makespans = {}
for m in ms:
    t = seconds[GLOBAL_ROWS // m] * 1e3   # ms per micro-batch forward on one stage
    makespans[m] = simulate(build("1f1b", P, m), Costs(f=t, b=t, w=t)).makespan
best_m = min(makespans, key=makespans.get)

fig, ax = figure.subplots(figsize=(6, 3))
ax.semilogx(ms, [makespans[m] for m in ms], "o-", base=2)
ax.plot([best_m], [makespans[best_m]], "r*", markersize=12)
ax.set_xlabel("micro-batches m (global batch fixed)")
ax.set_ylabel("iteration time (ms)")
ax.set_title(f"1F1B, p={P}, {GLOBAL_ROWS} rows per iteration, measured matmul costs", fontsize=10)
figure.show()
shape = claim(ms[0] < best_m < ms[-1], text("best-m-middle"), otherwise=text("best-m-edge"))
md(text("best-m", best=best_m, rows=GLOBAL_ROWS // best_m, best_ms=makespans[best_m], one_ms=makespans[1],
        last=ms[-1], last_ms=makespans[ms[-1]], shape=shape))

# %% [markdown] real-systems
# ~~ zh a0626f6c
# 真实系统里每个 micro-batch 还要付点对点通信和调度的固定开销，最优点会更靠左；工程上的经验是让 $m$ 取 $p$ 的若干倍，再由全局 batch 和显存定下来。
# ~~ en 25e71186
# In a real system every micro-batch also pays a fixed cost for point-to-point transfers and scheduling, which moves the best point further left; the rule of thumb in practice is an $m$ of a few times $p$, settled by the global batch and the memory.

# %% [markdown] summary
# ~~ zh 2270d51b
# 这个实验只测了一个矩阵乘，机器忙闲也会让数字抖动；重新运行一次，最优的 $m$ 可能挪一格。
#
# ## 怎么讲清楚
#
# - 只送一个 batch，$p$ 个 stage 轮流干活，利用率 $1/p$。
# - 切成 $m$ 个 micro-batch，多个 stage 同时工作，只剩灌满和排空的空闲：makespan $(m+p-1)(F+B)$，bubble $\frac{p-1}{m+p-1}$，与 $F:B$ 无关，GPipe 与 1F1B 相同。
# - 每个 rank 都空 $(p-1)(F+B)$，位置各不相同：GPipe 的 stage $s$ 开头 $sF$、中间 $(p-1-s)(F+B)$、结尾 $sB$；stage 0 的 bubble 全在中间。
# - 两种口径：迭代口径 $\frac{p-1}{m+p-1}$（空闲 / rank 数 × makespan），理想时间口径 $\frac{p-1}{m}$（空闲 / 计算，Megatron、Ultra-Scale Playbook、Zero Bubble README 的写法）。
# - 增大 $m$ 能压低 bubble，但全局 batch 固定，$m$ 越大 micro-batch 越小，小矩阵乘效率低、固定开销占比高，所以 $m$ 有上限。
# - 下一章：同样的 bubble，1F1B 怎样把 GPipe 的激活显存从 $m$ 份降到 $p$ 份；以及模拟器本身怎么工作。
#
# ## 练习
#
# - `bubble-ratio`（★☆☆）：先从一条时间线量出 bubble 占比，再把量出来的规律推成闭式解（含第 4 章的 $v$）。
# - `choose-m`（★★☆）：global batch 固定、每个操作有固定开销、显存有上限时，选出让一次迭代最快的 $m$。
#
# ```bash
# python practice/judge.py start bubble-ratio
# python practice/judge.py start choose-m
# ```
# ~~ en 0f78ba6d
# This experiment timed a single matmul, and a busy machine makes the numbers jitter; run it again and the best $m$ may move by one step.
#
# ## How to explain it
#
# - With the whole batch at once, the $p$ stages take turns and utilisation is $1/p$.
# - Split into $m$ micro-batches, several stages work at once and only the idle time of filling and draining is left: makespan $(m+p-1)(F+B)$, bubble fraction $\frac{p-1}{m+p-1}$, independent of $F:B$, the same for GPipe and 1F1B.
# - Every rank is idle for $(p-1)(F+B)$, each in different places: in GPipe, stage $s$ waits $sF$ at the start, $(p-1-s)(F+B)$ in the middle and $sB$ at the end; stage 0's bubble is all in the middle.
# - Two measures: against the iteration, $\frac{p-1}{m+p-1}$ (idle / number of ranks × makespan), and against the ideal time, $\frac{p-1}{m}$ (idle / compute, as Megatron, the Ultra-Scale Playbook and the Zero Bubble README write it).
# - A larger $m$ lowers the bubble, but with the global batch fixed a larger $m$ means smaller micro-batches, where matmuls run inefficiently and fixed overheads weigh more, so $m$ has a limit.
# - Next chapter: with the same bubble, how 1F1B cuts GPipe's activation memory from $m$ micro-batches to $p$, and how the simulator itself works.
#
# ## Exercises
#
# - `bubble-ratio` (★☆☆): measure the bubble fraction on a timeline, then turn what you measured into a closed form (including chapter 4's $v$).
# - `choose-m` (★★☆): with the global batch fixed, a fixed cost per operation and a memory cap, pick the $m$ that makes an iteration fastest.
#
# ```bash
# python practice/judge.py start bubble-ratio
# python practice/judge.py start choose-m
# ```
