# %% [markdown]
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

# %%
import time

import matplotlib.pyplot as plt
import torch
from IPython.display import Markdown, display

from course import plots
from course.claims import claim, reveal
from course.costs import Costs
from course.schedules import build
from course.sim import simulate
from course.widgets import explore


def md(text: str) -> None:
    """Show prose whose numbers come from this notebook's cells."""
    display(Markdown(text))

# %% [markdown]
# ## 1. 一个 batch 走完整条流水线：利用率 $1/p$
#
# 先用本课程的模拟器看最朴素的做法：整个 batch 作为一个 micro-batch（$m=1$）。`build("gpipe", p, m)` 生成每个 rank 的操作顺序（一个 *plan*），`simulate` 按依赖关系排出时间线。时间单位是抽象的代价单位（cost unit），各操作的耗时取 `Costs()` 的默认值：

# %%
P = 4
defaults = Costs()
md(f"`Costs()`：一个 stage 的前向 F = {defaults.f:g}，输入梯度 b = {defaults.b:g}，权重梯度 w = {defaults.w:g}，"
   f"所以完整反向 b + w = {defaults.b + defaults.w:g}；点对点延迟 comm = {defaults.comm:g}。")

# %% [markdown]
# **预测：** $p$ 个 stage、整个 batch 当作一个 micro-batch，每个 rank 忙碌的时间占 makespan 的几分之几？写成一个数（例如 `0.5`）。

# %%
guess_util = None   # 你的预测

# %%
one = simulate(build("gpipe", P, 1), defaults)
plots.gantt(one, title=f"p={P}, one micro-batch")
plt.show()
util = sum(one.busy) / (one.p * one.makespan)
md(reveal(guess_util, util, claim(abs(util - 1 / P) < 1e-12,
          f"整条流水线用了 {one.makespan:g} 个单位，每个 rank 只忙了 {one.busy[0]:g} 个单位，利用率正好是 $1/p$ = 1/{P}。"
          "灰色就是 bubble：任何时刻只有一个 rank 在干活。", util=util, p=P)))

# %% [markdown]
# ## 2. 切成 micro-batch：让多个 stage 同时工作
#
# 把 batch 切成 $m$ 份。micro-batch 0 离开 stage 0 之后，micro-batch 1 就可以进入 stage 0，于是多个 stage 同时在算不同的 micro-batch。GPipe 的做法是先把 $m$ 个前向全部做完，再做 $m$ 个反向。

# %% [markdown]
# **预测：** 下面这条 GPipe 时间线里，rank 0 做完自己的最后一个前向之后，要空等多久才轮到它的第一个反向？用 $p$、$F$、$B$ 想一想，再代入下一格的数，写成一个数。

# %%
guess_gap0 = None   # 你的预测（代价单位）

# %%
M = 8
gp = simulate(build("gpipe", P, M), defaults)
md(f"$p={P}$、$m={M}$ 的 GPipe 时间线。文本形式里数字是第几个 micro-batch 的前向，字母是对应的反向（a 是 micro-batch 0），`.` 是空闲：")
print(plots.ascii_timeline(gp))
plots.gantt(gp)
plt.show()


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
          f"rank 0 的前向在 {gp.ends[0][last_f]:g} 做完，第一个反向在 {gp.starts[0][last_f + 1]:g} 才开始，中间空了 "
          f"$(p-1)(F+B)$ = {gap0:g}：最后一个 micro-batch 的前向要再走 $p-1$ 个 stage，它的梯度还要走回来。"
          "rank 0 的 bubble 全在中间，开头和结尾一点都没有。", gap0=gap0)))
md(claim(gp.bubble_ratio < one.bubble_ratio and M >= P,
         f"makespan 是 **{gp.makespan:g}** 个单位，bubble 占比 **{gp.bubble_ratio:.1%}**，比 $m=1$ 时的 "
         f"{one.bubble_ratio:.0%} 小得多。空闲落在三块里：左上角是前向的灌满（fill）；中间一块是前向的排空（drain）"
         "接上反向的灌满，rank 0 那一行最宽；右下角是反向的排空。前向、反向各自的稳定阶段里所有 rank 都在忙。", gpipe=gp.bubble_ratio, one=one.bubble_ratio))

# %% [markdown]
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

# %%
rows = []
for r in range(P):
    head, middle, tail = idle_parts(gp, r)
    assert abs(head - r * F_) < 1e-12 and abs(middle - (P - 1 - r) * (F_ + B_)) < 1e-12 and abs(tail - r * B_) < 1e-12
    rows.append(f"| {r} | {head:g} | {middle:g} | {tail:g} | {head + middle + tail:g} |")
md(f"GPipe，$p={P}$、$m={M}$、$F={F_:g}$、$B={B_:g}$：\n\n| stage | 开头 $sF$ | 中间 $(p-1-s)(F+B)$ | 结尾 $sB$ | 合计 |\n"
   "|---|---|---|---|---|\n" + "\n".join(rows))
md(claim(all(abs(sum(idle_parts(gp, r)) - (P - 1) * (F_ + B_)) < 1e-12 for r in range(P)),
         f"每一行合计都是 $(p-1)(F+B)$ = {(P - 1) * (F_ + B_):g}。所以\"开头和结尾的空闲才是 bubble\"并不对："
         "stage 0 的 bubble 整块夹在两个操作之间。第 8 章读实测 trace 时还会用到这一点。"))

# %% [markdown]
# 公式是推出来的，下一格让模拟器在一片参数上逐一核对（包括反向是前向 3 倍的情形），两种调度都算：

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
md(claim(worst < 1e-12,
         f"核对了 **{checked}** 个 (schedule, F:B, p, m) 组合，模拟器与公式的最大差是 {worst:.1e}：公式在各 stage 耗时相同时成立，"
         "并且与 F:B 无关，GPipe 和 1F1B 一样（两者的区别在显存，见第 2 章）。", worst=worst))

# %% [markdown]
# ### 两种 bubble 口径
#
# 读论文时会碰到另一个公式。上面的 $\frac{p-1}{m+p-1}$ 是**迭代口径**：空闲占"rank 数 × makespan"这个矩形的比例。
# Megatron-LM 的论文（Narayanan et al., 2021）、Hugging Face 的 Ultra-Scale Playbook 和 Zero Bubble 的 README 写的是
# $\frac{p-1}{m}$，它是**理想时间口径**：bubble 时间除以理想的计算时间 $m(F+B)$，也就是每个 rank 的 $(p-1)(F+B)$ 除以它的 $m(F+B)$。
# 两者说的是同一段空闲，分母不同：前者不超过 1，后者在 $m < p-1$ 时可以大于 1。

# %% [markdown]
# **预测：** $p=4$、$m=8$ 时，按 Megatron 的口径，bubble 是多少？（写成小数）

# %%
guess_megatron = None   # 你的预测

# %%
megatron = [(gp.makespan - gp.busy[r]) / gp.busy[r] for r in range(P)]   # each rank: bubble time / ideal compute
assert all(abs(x - (P - 1) / M) < 1e-12 for x in megatron)
md(reveal(guess_megatron, megatron[0], claim(abs(gp.bubble_ratio - (P - 1) / (M + P - 1)) < 1e-12,
          f"同一条时间线：每个 rank 的空闲 / 忙碌 = {megatron[0]:.3f} = $(p-1)/m$ = {P - 1}/{M}；"
          f"空闲 / (rank 数 × makespan) = {gp.bubble_ratio:.3f} = $(p-1)/(m+p-1)$ = {P - 1}/{M + P - 1}。"
          "两者的换算：$\\frac{p-1}{m+p-1} = \\frac{x}{1+x}$，其中 $x = \\frac{p-1}{m}$。",
          megatron=megatron[0], ratio=gp.bubble_ratio)))

# %% [markdown]
# ### bubble 随 $m$ 下降
#
# 固定 $p=4$，把 $m$ 翻倍几次，比较模拟结果与公式：

# %%
rows = []
for m in (4, 8, 16, 32):
    tl = simulate(build("1f1b", P, m), Costs())
    rows.append(f"| {m} | {tl.makespan:g} | {tl.bubble_ratio:.1%} | {bubble_formula(P, m):.1%} |")
md("| m | makespan | bubble (simulated) | (p-1)/(m+p-1) |\n|---|---|---|---|\n" + "\n".join(rows))
m_half = 2 * M + P - 1   # the m that halves the bubble of (P, M): (P-1)/(m+P-1) = (P-1)/(2(M+P-1))
m_10 = next(m for m in range(1, 1000) if simulate(build("1f1b", P, m)).bubble_ratio <= 0.1 + 1e-12)
md(claim(abs(bubble_formula(P, m_half) - bubble_formula(P, M) / 2) < 1e-12 and m_10 == 9 * (P - 1),
         f"$m$ 翻倍，bubble 大约减半，但不是正好减半：把 $p={P}, m={M}$ 的 {bubble_formula(P, M):.1%} 降一半，"
         f"需要 $m={m_half}$，而不是 {2 * M}。要让 bubble 不超过 10%，需要 $m \\ge 9(p-1)$："
         f"$p={P}$ 时模拟器找到的最小 $m$ 是 {m_10}。按 Megatron 的口径 $(p-1)/m$，同一个 $m$ 的 bubble 是 "
         f"{(P - 1) / m_10:.1%}。", m_half=m_half, m_10=m_10))

# %% [markdown]
# ## 4. 自己拖一拖
#
# 左图是公式给出的 bubble 曲线（几条不同的 $p$），黑点是当前的 $(p, m)$；右图是模拟器画出的 1F1B 时间线。
# 改 `backward`（反向相对前向的耗时）：右边的时间线变长了，左边的 bubble 占比不变。

# %%
def bubble_explorer(fig, p, m, backward):
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.6])
    plots.bubble_curves(ps=(2, 4, 8), ms=range(1, 33), ax=left, highlight=(p, m))
    tl = simulate(build("1f1b", p, m), Costs(f=1.0, b=backward, w=0.0))
    plots.gantt(tl, ax=right)


explore(bubble_explorer, figsize=(12, 3.8), p=(2, 8, 4), m=(1, 16, 8), backward=(0.5, 4.0, 2.0, 0.5))

# %% [markdown]
# **任务：** 把 `p` 拖到 6，找出让 bubble 占比不超过 25% 的最小 `m`，填进下一格。

# %%
answer_min_m = None   # 你在 widget 里找到的 m

# %%
TASK_P, TASK_BUBBLE = 6, 0.25
min_m = next(m for m in range(1, 100) if simulate(build("1f1b", TASK_P, m)).bubble_ratio <= TASK_BUBBLE + 1e-12)
md(reveal(answer_min_m, min_m, f"$p={TASK_P}$：$(p-1)/(m+p-1) \\le {TASK_BUBBLE:g}$ 等价于 $m \\ge {TASK_P - 1}\\cdot"
          f"(1/{TASK_BUBBLE:g}-1)$ = {min_m}，模拟器在 m={min_m} 给出 {simulate(build('1f1b', TASK_P, min_m)).bubble_ratio:.1%}。"))

# %% [markdown]
# ## 5. 为什么 $m$ 不能无限大
#
# 公式说 $m \to \infty$ 时 bubble 趋于 0，但有两道上限：
#
# 1. **全局 batch 是给定的。** 一次迭代处理的样本数 = 数据并行份数 × $m$ × micro-batch 大小。全局 batch 由优化（收敛、学习率）决定，不能为了流水线随意加大；$m$ 越大，每个 micro-batch 就越小。
# 2. **小矩阵乘法效率低。** micro-batch 小到一定程度，矩阵乘就从"算力受限"变成"访存和固定开销受限"，每个样本花的时间反而变长。
#
# 第 2 点在这台机器上就能量出来：固定权重 $W \in \mathbb{R}^{h\times h}$，把输入的行数（相当于 micro-batch 里的 token 数）从 1 行开始逐次翻倍，测 `x @ W` 的吞吐。

# %%
H = 512
torch.manual_seed(0)
weight = torch.randn(H, H)


def matmul_seconds(rows: int, budget: float = 0.01) -> float:
    """Best wall time of one (rows x H) @ (H x H) product over repeats lasting about ``budget`` seconds."""
    x = torch.randn(rows, H)
    x @ weight   # warm-up
    best, spent = float("inf"), 0.0
    while spent < budget:
        t0 = time.perf_counter()
        x @ weight
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
    return best


# One thread: on a shared laptop, threads waiting for each other would measure the scheduler, not the matmul.
# Three sweeps, best of each size: a moment of load from elsewhere does not decide the curve.
threads = torch.get_num_threads()
torch.set_num_threads(1)
sizes = [2 ** k for k in range(9)]
seconds = {n: min(matmul_seconds(n) for _ in range(3)) for n in sizes}
torch.set_num_threads(threads)
gflops = {n: 2 * n * H * H / seconds[n] / 1e9 for n in sizes}
fastest = max(sizes, key=gflops.get)

fig, ax = plt.subplots(figsize=(6, 3))
ax.semilogx(sizes, [gflops[n] for n in sizes], "o-", base=2)
ax.set_xlabel("rows per matmul (micro-batch tokens)")
ax.set_ylabel("GFLOP/s")
ax.set_title(f"(rows x {H}) @ ({H} x {H}), one CPU thread", fontsize=10)
plt.show()
md(claim(gflops[fastest] >= 2 * gflops[1],
         f"在这台机器上，1 行的吞吐是 **{gflops[1]:.1f}** GFLOP/s，最快的 {fastest} 行是 **{gflops[fastest]:.1f}** GFLOP/s，"
         f"相差 **{gflops[fastest] / gflops[1]:.1f}** 倍：行数少时，时间花在读权重和调用开销上，而不是乘加。",
         otherwise=f"在这台机器上，1 行的吞吐是 **{gflops[1]:.1f}** GFLOP/s，最快的 {fastest} 行是 **{gflops[fastest]:.1f}** "
                   "GFLOP/s，这次测量里差距不到 2 倍（机器忙闲会让小矩阵的计时抖动，可以重跑一次）。"))

# %% [markdown]
# GPU 上这个差距大得多：几行的矩阵填不满成千上万个计算单元，时间几乎全是 kernel 启动和读权重。

# %% [markdown]
# 把两件事放在一起：一次迭代固定处理的行数取上面量过的最大行数、$p=4$，切成 $m$ 份，每个 micro-batch 在一个 stage 上的前向耗时就用上面测到的时间（反向按 2 倍），交给模拟器算一次迭代的 makespan。$m$ 小，bubble 大；$m$ 大，每一份都算得不划算：

# %%
GLOBAL_ROWS = sizes[-1]
ms = [m for m in sizes if m <= GLOBAL_ROWS]
makespans = {}
for m in ms:
    t = seconds[GLOBAL_ROWS // m] * 1e3   # ms per micro-batch forward on one stage
    makespans[m] = simulate(build("1f1b", P, m), Costs(f=t, b=t, w=t)).makespan
best_m = min(makespans, key=makespans.get)

fig, ax = plt.subplots(figsize=(6, 3))
ax.semilogx(ms, [makespans[m] for m in ms], "o-", base=2)
ax.plot([best_m], [makespans[best_m]], "r*", markersize=12)
ax.set_xlabel("micro-batches m (global batch fixed)")
ax.set_ylabel("iteration time (ms)")
ax.set_title(f"1F1B, p={P}, {GLOBAL_ROWS} rows per iteration, measured matmul costs", fontsize=10)
plt.show()
shape = claim(ms[0] < best_m < ms[-1], "两头高、中间低：最优的 $m$ 在中间。",
              otherwise="这次测量里最优点落在了端点上（机器忙闲会让小矩阵的计时抖动，可以重跑一次看看）。")
md(f"这台机器上最快的是 **m={best_m}**（每个 micro-batch {GLOBAL_ROWS // best_m} 行），迭代 {makespans[best_m]:.2f} ms；"
   f"m=1 是 {makespans[1]:.2f} ms，m={ms[-1]} 是 {makespans[ms[-1]]:.2f} ms。{shape}")

# %% [markdown]
# 真实系统里每个 micro-batch 还要付点对点通信和调度的固定开销，最优点会更靠左；工程上的经验是让 $m$ 取 $p$ 的若干倍，再由全局 batch 和显存定下来。

# %% [markdown]
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
