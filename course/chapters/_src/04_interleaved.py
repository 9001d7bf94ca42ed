# %% [markdown]
# # 第 4 章　交错式 1F1B：用虚拟 stage 把气泡除以 v
#
# 前几章里，1F1B 的气泡占比是 $(p-1)/(m+p-1)$：要么加大 micro-batch 数 $m$（受全局 batch 和小矩阵效率限制），要么认命。
# Megatron-LM 的交错调度（interleaved 1F1B，也叫 virtual pipeline）换了一个思路：**不改 $m$，把每张卡负责的那段模型再切细**。
# 本章用模拟器和真实的多进程运行回答三个问题：气泡为什么正好缩小到 $1/v$；代价（点对点通信、激活显存、整除约束）有多大；
# 什么时候不值得。
#
# ## 自测
#
# 1. 交错调度里，一张卡持有几段模型？这些段在模型里相邻吗？
# 2. 为什么气泡恰好缩小到原来的 $1/v$，而不是别的比例？
# 3. 每个 micro-batch 一次迭代要跨卡传几次激活？和 1F1B 比是多少倍？
# 4. Megatron 的交错顺序对 $m$ 有什么要求？为什么？
# 5. $v$ 越大越好吗？至少说出两个限制。
#
# <details><summary>参考答案（先自己答，再展开）</summary>
#
# 1. $v$ 段，互不相邻。模型被切成 $vp$ 个 chunk（虚拟 stage），卡 $r$ 持有第 $r, r+p, \dots, r+(v-1)p$ 个，
#    所以一个 micro-batch 的前向要在 $p$ 张卡之间绕 $v$ 圈。
# 2. 灌满和排空的长度由"一个 chunk 的计算时间"决定：第一个 micro-batch 要走过 $p-1$ 次卡间接力才能到达最后一张卡，
#    每一棒只做 $1/v$ 的工作，所以灌满、排空都缩短为 $1/v$；而每张卡的总计算量 $m(F+B)$ 不变。
#    于是 makespan $= m(F+B) + (p-1)(F+B)/v$，气泡占比 $(p-1)/(vm+p-1)$。
# 3. 前向 $vp-1$ 次（反向同样多），1F1B 是 $p-1$ 次，比值 $(vp-1)/(p-1)$，略大于 $v$。每条消息的大小不变（一个 micro-batch 的激活）。
# 4. $m$ 必须是 $p$ 的倍数：卡按 $p$ 个 micro-batch 一组在自己的各个 chunk 之间轮转，组不完整时这个顺序排不出来
#    （本库的 `interleaved` 会直接拒绝并说明原因）。
# 5. 不是。点对点通信次数约 $\times v$，延迟掩盖不住时收益会被吃掉；每个 chunk 更小，矩阵乘效率下降；
#    层数要能被 $vp$ 整除；预热阶段要多存一些激活；$m$ 还必须是 $p$ 的倍数。
#
# </details>

# %%
from fractions import Fraction

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import formulas, plots
from course.costs import Costs
from course.plan import ops_of
from course.schedules import build
from course.sim import simulate
from course.widgets import explore


def md(text: str) -> None:
    """Prose whose numbers come from this notebook's cells."""
    display(Markdown(text))


# %% [markdown]
# ## 1. 虚拟 stage：一张卡，几段不相邻的层
#
# 1F1B 里卡 $r$ 持有连续的一段层。交错调度把模型切成 $vp$ 个 chunk，卡 $r$ 按"发牌"的方式拿到第 $r, r+p, \dots$ 个。
# 下面用一个具体的模型看一看：`plan.placement[r]` 是卡 $r$ 持有的 stage（chunk）编号。

# %%
p, m, v, layers = 4, 8, 2, 16
plan = build("interleaved", p, m, v=v)
per_chunk = layers // plan.num_stages
for r, stages in enumerate(plan.placement):
    spans = [f"layers {s * per_chunk}-{(s + 1) * per_chunk - 1}" for s in stages]
    print(f"rank {r}: stages {stages} -> {', '.join(spans)}")

md(f"$p={p}$ 张卡、$v={v}$、一共 {layers} 层：模型被切成 {plan.num_stages} 个 chunk，每个 {per_chunk} 层。"
   f"卡 0 持有 stage {plan.placement[0]}，一个 micro-batch 的前向依次经过卡 "
   f"{' → '.join(str(plan.rank_of_stage()[s]) for s in plan.routes[0])}，在 {p} 张卡之间绕 {v} 圈。")

# %% [markdown]
# 计划（plan）的文字形式和论文里的表格一样读：`F3.s4` 是 micro-batch 3 在 stage 4 上的前向。
# 看卡 0 的前几步，再数一数每张卡在第一个反向之前做了几个前向：

# %%
print("rank 0:", " ".join(plan.rank_tokens(0)[:16]), "...")
before_first_b = [next(i for i, step in enumerate(steps) if ops_of(step)[0].kind != "F") for steps in plan.ranks]
megatron_warmup = [min(2 * (p - r - 1) + (v - 1) * p, m * v) for r in range(p)]
assert before_first_b == [w + 1 for w in megatron_warmup]
print("forwards before the first backward:", before_first_b)
print("Megatron's warm-up 2(p-r-1) + (v-1)p:", megatron_warmup)
md(f"卡 0 先把 micro-batch 0..{p - 1} 送过自己的第一个 chunk（stage {plan.placement[0][0]}），"
   f"再把同一组送过第二个 chunk（stage {plan.placement[0][1]}），然后才轮到下一组：micro-batch 按 $p$ 个一组在 chunk 之间轮转。"
   f"预热的前向个数是 Megatron 的 $2(p-r-1)+(v-1)p$，卡 0 是 {megatron_warmup[0]} 个；"
   f"再加上稳定阶段开头的那一个前向，就是上面数出来的 {before_first_b[0]}（1F1B 的卡 0 是 $p$ = {p} 个）。"
   f"前向多了，但每个只有 $1/v$ 的工作量。")

# %% [markdown]
# ## 2. 时间线：同样的 $m$，更短的灌满和排空
#
# 代价沿用前几章的默认值 `Costs()`：时间都指"一张卡那一份模型"，完整反向是库里的 `b + w`；
# 交错调度的一个 chunk 只花它的 $1/v$。

# %%
costs = Costs()  # default costs, no latency
md(f"前向 $F={costs.f:g}$，完整反向 $B={costs.b + costs.w:g}$；交错调度（$v={v}$）的一个 chunk 前向 {costs.f / v:g}、反向 {(costs.b + costs.w) / v:g}。")
one = simulate(build("1f1b", p, m), costs)
inter = simulate(plan, costs)
fig = plots.compare([one, inter])

# %%
formula = Fraction(p - 1, v * m + p - 1)
md(f"$p={p}, m={m}$：1F1B 的 makespan 是 **{one.makespan:g}**，气泡占比 {one.bubble_ratio:.1%}；"
   f"交错调度（$v={v}$）的 makespan 是 **{inter.makespan:g}**，气泡占比 {inter.bubble_ratio:.1%}。"
   f"公式 $(p-1)/(vm+p-1) = {formula.numerator}/{formula.denominator} = {float(formula):.1%}$，"
   f"与模拟{'一致' if abs(inter.bubble_ratio - float(formula)) < 1e-9 else '不一致（见下一节）'}。"
   f"每张卡的忙碌时间都是 {inter.busy[0]:g}：交错调度没有减少工作量，只减少了等待。")

# %% [markdown]
# ## 3. 为什么恰好是 $1/v$
#
# 设一张卡那一份模型的前向、反向时间是 $F$、$B$，一个 chunk 就是 $F/v$、$B/v$。
#
# - **灌满**：第一个 micro-batch 的前向要经过 $p-1$ 次卡间接力才轮到最后一张卡开始工作，每一棒 $F/v$，共 $(p-1)F/v$。
# - **排空**：对称地，最后一个反向要经过 $p-1$ 棒回到卡 0，共 $(p-1)B/v$。
# - **稳定阶段**：每张卡要做完 $m$ 个 micro-batch 的全部 $v$ 个 chunk，总计 $m(F+B)$，与 $v$ 无关。
#
# 所以 makespan $= m(F+B) + (p-1)(F+B)/v$，气泡占比
# $$\frac{(p-1)(F+B)/v}{m(F+B) + (p-1)(F+B)/v} = \frac{p-1}{vm+p-1}.$$
# 换个读法：交错调度相当于把 micro-batch 数从 $m$ 变成 $vm$，却不用把 micro-batch 切小。下面对几个 $v$ 检查：

# %%
rows = ["| v | makespan (sim) | m(F+B) + (p-1)(F+B)/v | bubble (sim) | (p-1)/(vm+p-1) |", "|---|---|---|---|---|"]
sweep = {}
for vv in (1, 2, 4):
    tl = simulate(build("1f1b", p, m) if vv == 1 else build("interleaved", p, m, v=vv), costs)
    sweep[vv] = tl
    closed = (m + (p - 1) / vv) * (costs.f + costs.b + costs.w)
    rows.append(f"| {vv} | {tl.makespan:g} | {closed:g} | {tl.bubble_ratio:.2%} | {(p - 1) / (vv * m + p - 1):.2%} |")
md("\n".join(rows))
assert all(abs(tl.bubble_ratio - (p - 1) / (vv * m + p - 1)) < 1e-9 for vv, tl in sweep.items())

# %% [markdown]
# ## 4. 代价一：点对点通信乘以 $v$
#
# 一个 micro-batch 每跨过一个 chunk 边界，就要把激活（反向时是梯度）发给下一张卡。1F1B 有 $p-1$ 个边界，
# 交错调度有 $vp-1$ 个——相邻的 chunk 总在不同的卡上。数一数计划里"依赖的生产者在另一张卡上"的次数：

# %%
def transfers(plan) -> int:
    """Point-to-point messages one iteration needs: dependencies whose producer sits on another rank."""
    rank_of = plan.rank_of_stage()
    return sum(1 for r, steps in enumerate(plan.ranks) for step in steps for op in ops_of(step)
               for dep in plan.dependencies(op) if rank_of[dep.stage] != r)


counts = {vv: transfers(build("1f1b", p, m) if vv == 1 else build("interleaved", p, m, v=vv)) for vv in (1, 2, 4)}
md("每次迭代的点对点消息数（前向加反向）：" + "，".join(f"$v={vv}$: **{c}**" for vv, c in counts.items())
   + f"。$v={v}$ 时是 1F1B 的 {counts[v] / counts[1]:.2f} 倍，正是 $(vp-1)/(p-1) = {(v * p - 1)}/{p - 1}$；"
   f"消息大小不变，所以字节数也是这个倍数。")

# %% [markdown]
# 这些消息各自带一段延迟。给每次跨卡传输加上延迟 `comm`（单位与 $F$ 相同），看交错调度的优势还剩多少：

# %%
lat_rows = ["| comm | " + " | ".join(f"v={vv}" for vv in (1, 2, 4)) + " |", "|---" * 4 + "|"]
crossover = None
for comm in (0.0, 0.1, 0.25, 0.5, 1.0):
    c = Costs(comm=comm)
    spans = {vv: simulate(build("1f1b", p, m) if vv == 1 else build("interleaved", p, m, v=vv), c).makespan
             for vv in (1, 2, 4)}
    lat_rows.append(f"| {comm:g} | " + " | ".join(f"{spans[vv]:g}" for vv in (1, 2, 4)) + " |")
    if crossover is None and spans[4] >= spans[2]:
        crossover = comm
md("makespan（$p=%d, m=%d$）：\n\n" % (p, m) + "\n".join(lat_rows))
md("延迟为零时 $v$ 越大越快；延迟增大后，多出来的 $(vp-1)$ 次传输开始占据关键路径"
   + (f"，`comm` $\\ge {crossover:g}$ 时 $v=4$ 已经不比 $v=2$ 快。" if crossover is not None else "。")
   + "真实系统里点对点传输可以和计算重叠一部分，但跨节点的 PP 延迟往往不可忽略，这是实践中 $v$ 只取很小的值的原因之一。")

# %% [markdown]
# ## 5. 代价二：预热阶段多存的激活
#
# 内存按"一个 micro-batch 在一张卡那一份模型上的激活"计（1F1B 的卡 0 峰值是 $p$）。交错调度的一个 chunk 只存 $1/v$ 份，
# 但预热阶段做了更多前向：

# %%
peaks = {vv: tl.peak_activations for vv, tl in sweep.items()}
md("各卡的激活峰值：" + "；".join(f"$v={vv}$: {[round(x, 3) for x in pk]}" for vv, pk in peaks.items())
   + f"。卡 0 从 {peaks[1][0]:g} 变成 {peaks[2][0]:g}（$v=2$）和 {peaks[4][0]:g}（$v=4$）："
   f"卡 $r$ 在第一个反向之前存着 $2(p-r-1)+(v-1)p+1$ 个 chunk 的激活，每个 $1/v$ 份。"
   f"交错调度用一点额外的激活显存换来了更短的灌满阶段。")
for vv in (2, 4):   # the library's closed form says the same
    assert list(formulas.predict("interleaved", p, m, costs, v=vv).peak_activations) == peaks[vv]
fig = plots.compare([sweep[1], sweep[2]], memory_too=True)

# %% [markdown]
# ## 6. 整除约束
#
# 卡按 $p$ 个 micro-batch 一组在 chunk 之间轮转，$m$ 不是 $p$ 的倍数时最后一组不完整，Megatron 的顺序就排不出来
# （新版 Megatron 放宽了这一条，代价是更复杂的顺序；本库实现的是经典版本）。库会给出一行清楚的错误：

# %%
for bad_m in (6, 3):
    try:
        build("interleaved", p, bad_m, v=v)
    except ValueError as err:
        print(f"m={bad_m}: {err}")

# %% [markdown]
# 另外两条整除约束在库外面：模型的层数要能被 $vp$ 整除（否则 chunk 不等长，负载不均衡），
# 全局 batch 要能切成 $m$ 个等大的 micro-batch。
#
# ## 7. 自己动手：拖动 $v$
#
# 上面是 1F1B，下面是同样 $p$、$m$、延迟下的交错调度。`m_per_p` 是 $m/p$（保证整除）。
# 留意：$v$ 增大时灌满的斜坡变陡；`comm` 增大时，$v$ 大的那张图先被拉长。

# %%
def interleaved_vs_1f1b(fig, p, m_per_p, v, comm):
    m = p * m_per_p
    c = Costs(comm=comm)
    base = simulate(build("1f1b", p, m), c)
    tl = simulate(build("1f1b", p, m) if v == 1 else build("interleaved", p, m, v=v), c)
    top, bottom = fig.subplots(2, 1, sharex=True)
    plots.gantt(base, ax=top, labels=False)
    plots.gantt(tl, ax=bottom, labels=False,
                title=f"interleaved v={v}: makespan {tl.makespan:.4g}, bubble {tl.bubble_ratio:.1%} "
                      f"(formula {(p - 1) / (v * m + p - 1):.1%} at comm=0)")
    bottom.set_xlim(0, max(base.makespan, tl.makespan))


explorer = explore(interleaved_vs_1f1b, figsize=(10, 4.5), p=(2, 6, 4), m_per_p=(1, 4, 2), v=(1, 4, 2),
                   comm=(0.0, 1.0, 0.0, 0.05))

# %% [markdown]
# ## 8. 和 torch.distributed.pipelining 对照
#
# PyTorch 自带的 `ScheduleInterleaved1F1B` 也实现了 Megatron 的交错顺序。`course.torch_bridge` 不建进程组、不建模型，
# 只把它排出的 `pipeline_order` 翻译成本库的 `Plan`，于是可以逐个算子比较，并放进同一个模拟器：

# %%
from course.torch_bridge import torch_plan  # noqa: E402  (imports torch)

theirs = torch_plan("ScheduleInterleaved1F1B", p, m, v=v)
same_order = theirs.format() == plan.format() and theirs.placement == plan.placement
md(f"$p={p}, m={m}, v={v}$：torch 的顺序与本库的 `interleaved` {'逐个算子完全相同' if same_order else '**不同**'}；"
   f"模拟的 makespan 分别是 {simulate(theirs, costs).makespan:g} 和 {inter.makespan:g}。")

# %% [markdown]
# ## 9. 真跑一遍：多进程上的交错调度
#
# 同一个 `Plan` 交给 `course.live`：每张卡一个 gloo 进程，每个进程持有 $v$ 个不相邻的 chunk（一叠 Linear+Tanh），
# 激活和梯度用带标签的异步消息传递。运行结束后，每个参数的梯度都和单进程在整个 batch 上算出的梯度比较。
# `emulate=True` 把每个算子补齐到模型里的时长，所以测得的时间线应当和模拟的形状一致。

# %%
from course.live import run_plan  # noqa: E402  (starts processes only when called)

live_plan = build("interleaved", 2, 4, v=2)
live = run_plan(live_plan, Costs(), emulate=True)
md(f"$p={live_plan.p}$、$v={len(live_plan.placement[0])}$、$m={live_plan.m}$：每个参数的梯度与单进程参照"
   f"{'一致' if live.grad_ok else '**不一致**'}（最大绝对误差 {live.max_abs_err:.1e}）。"
   f"一个代价单位模拟 {live.unit_ms:g} ms 的设备时间：测得的 makespan {live.measured_makespan:.3g} s，"
   f"模拟预测 {live.simulated_makespan:.3g} s，比值 {live.ratio:.2f}"
   + ("，时间线的形状和模拟一致。" if 0.8 <= live.ratio <= 1.3 else
      "：差得较多，说明这台机器上进程在抢 CPU，算子本身就超过了模拟的设备时间（emulate 只能补齐，不能压缩）。"))
fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 3.6))
plots.gantt(live.timeline, ax=top, title=f"measured: {live.measured_makespan:.3g} s (emulated device time)")
plots.gantt(live.simulated, ax=bottom, title=f"simulated: {live.simulated.makespan:g} cost units")
fig.tight_layout()

# %% [markdown]
# ## 怎么讲清楚
#
# - 交错调度把模型切成 $vp$ 个 chunk，卡 $r$ 持有第 $r, r+p, \dots$ 个；micro-batch 在卡之间绕 $v$ 圈。
# - 灌满和排空由"一个 chunk 的时间"决定，缩短为 $1/v$；每张卡的工作量 $m(F+B)$ 不变，所以气泡占比是 $(p-1)/(vm+p-1)$，
#   效果相当于把 micro-batch 数乘以 $v$ 而不缩小 micro-batch。
# - 代价：点对点消息从 $p-1$ 变成 $vp-1$（约 $\times v$），延迟大时收益被吃掉；预热阶段多存一些激活；
#   $m$ 必须是 $p$ 的倍数，层数必须能被 $vp$ 整除。
# - 模拟和真跑用的是同一个 `Plan`：梯度逐个与单进程对齐，测得的时间线可以和模拟对照；torch 的 `ScheduleInterleaved1F1B`
#   排出的顺序也能翻译成同一种 `Plan`，逐个算子比较。
#
# ## 练习
#
# - `interleaved-order`：不调用库，写出交错调度某张卡的执行顺序（按 $p$ 个一组在 chunk 间轮转、Megatron 的预热个数）；
#   测试用本库的模拟器检查它不死锁，makespan 等于 $m(F+B) + (p-1)(F+B)/v$。
#
# ```bash
# python practice/judge.py start interleaved-order
# python practice/judge.py test interleaved-order
# ```
