# %% [markdown]
# # 第 4 章　交错式 1F1B：用虚拟 stage 把 bubble 除以 v
#
# 前几章里，1F1B 的 bubble 占比是 $(p-1)/(m+p-1)$：要么加大 micro-batch 数 $m$（受全局 batch 和小矩阵效率限制），要么只能接受。
# Megatron-LM 的交错调度（interleaved 1F1B，也叫 virtual pipeline）换了一个思路：**不改 $m$，把每个 rank 负责的那段模型再切细**。
# 本章用模拟器和真实的多进程运行回答三个问题：bubble 为什么正好缩小到 $1/v$；代价（点对点通信、激活显存、整除约束）有多大；
# 什么时候不值得。术语对照见[术语表](glossary.md)。
#
# ## 自测
#
# 1. 交错调度里，一个 rank 持有几段模型？这些段在模型里相邻吗？
# 2. 为什么 bubble 恰好缩小到原来的 $1/v$，而不是别的比例？
# 3. 每个 micro-batch 一次迭代要跨 rank 传几次激活？和 1F1B 比是多少倍？
# 4. Megatron 的交错顺序对 $m$ 有什么要求？为什么？
# 5. $v$ 越大越好吗？至少说出两个限制。
#
# <details><summary>参考答案（先自己答，再展开）</summary>
#
# 1. $v$ 段，互不相邻。模型被切成 $vp$ 个 chunk（虚拟 stage），rank $r$ 持有第 $r, r+p, \dots, r+(v-1)p$ 个，
#    所以一个 micro-batch 的前向要在 $p$ 个 rank 之间绕 $v$ 圈。
# 2. 灌满和排空的长度由"一个 chunk 的计算时间"决定：第一个 micro-batch 要走过 $p-1$ 次 rank 间接力才能到达最后一个 rank，
#    每一棒只做 $1/v$ 的工作，所以灌满、排空都缩短为 $1/v$；而每个 rank 的总计算量 $m(F+B)$ 不变。
#    于是 makespan $= m(F+B) + (p-1)(F+B)/v$，bubble 占比 $(p-1)/(vm+p-1)$。
# 3. 前向 $vp-1$ 次（反向同样多），1F1B 是 $p-1$ 次，比值 $(vp-1)/(p-1)$，略大于 $v$。每条消息的大小不变（一个 micro-batch 的激活）。
# 4. Megatron 的经典顺序要求 $m$ 是 $p$ 的倍数：rank 按 $p$ 个 micro-batch 一组在自己的各个 chunk 之间轮转（本库的 `interleaved`）。
#    这不是交错调度本身的限制：torch 的 `ScheduleInterleaved1F1B` 把组大小放宽为 $m / \max(1, \lfloor m/p \rfloor)$，
#    只要求 $m$ 能被轮数 $\max(1, \lfloor m/p \rfloor)$ 整除（$p=4$ 时 $m=3$、$m=10$ 都行；本库的 `interleaved-flex`）。组比 $p$ 大时，预热要多存激活。
# 5. 不是。点对点通信次数约 $\times v$，延迟掩盖不住时收益会被吃掉；每个 chunk 更小，矩阵乘效率下降；
#    层数要能被 $vp$ 整除。激活显存反而不是理由：rank 0 的峰值是 $p + (p-1)/v$ 份，比 1F1B 多的 $(p-1)/v$ 随 $v$ 增大而变小。
#
# </details>

# %%
from fractions import Fraction

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import formulas, plots
from course.claims import claim, reveal
from course.costs import Costs
from course.plan import ops_of
from course.schedules import build
from course.sim import simulate
from course.widgets import explore


def md(text: str) -> None:
    """Prose whose numbers come from this notebook's cells."""
    display(Markdown(text))


# %% [markdown]
# ## 1. 虚拟 stage：一个 rank，几段不相邻的层
#
# 1F1B 里 rank $r$ 持有连续的一段层。交错调度把模型切成 $vp$ 个 chunk，rank $r$ 按"发牌"的方式拿到第 $r, r+p, \dots$ 个。
# 下面用一个具体的模型看一看：`plan.placement[r]` 是 rank $r$ 持有的 stage（chunk）编号。

# %%
p, m, v, layers = 4, 8, 2, 16
plan = build("interleaved", p, m, v=v)
per_chunk = layers // plan.num_stages
for r, stages in enumerate(plan.placement):
    spans = [f"layers {s * per_chunk}-{(s + 1) * per_chunk - 1}" for s in stages]
    print(f"rank {r}: stages {stages} -> {', '.join(spans)}")

md(f"$p={p}$ 个 rank、$v={v}$、一共 {layers} 层：模型被切成 {plan.num_stages} 个 chunk，每个 {per_chunk} 层。"
   f"rank 0 持有 stage {plan.placement[0]}，一个 micro-batch 的前向依次经过 rank "
   f"{' → '.join(str(plan.rank_of_stage()[s]) for s in plan.routes[0])}，在 {p} 个 rank 之间绕 {v} 圈。")

# %% [markdown]
# 计划（plan）的文字形式和论文里的表格一样读：`F3.s4` 是 micro-batch 3 在 stage 4 上的前向。
# 看 rank 0 的前几步，再数一数每个 rank 在第一个反向之前做了几个前向：

# %%
print("rank 0:", " ".join(plan.rank_tokens(0)[:16]), "...")
before_first_b = [next(i for i, step in enumerate(steps) if ops_of(step)[0].kind != "F") for steps in plan.ranks]
megatron_warmup = [min(2 * (p - r - 1) + (v - 1) * p, m * v) for r in range(p)]
assert before_first_b == [w + 1 for w in megatron_warmup]
print("forwards before the first backward:", before_first_b)
print("Megatron's warm-up 2(p-r-1) + (v-1)p:", megatron_warmup)
plain = build("1f1b", p, m).ranks[0]
plain_before_b = next(i for i, step in enumerate(plain) if ops_of(step)[0].kind != "F")
first_groups = [ops_of(step)[0].mb for step in plan.ranks[0][:2 * p]]   # micro-batches of rank 0's first 2p forwards
md(claim(plain_before_b == p and first_groups == list(range(p)) * 2,
         f"rank 0 先把 micro-batch 0..{p - 1} 送过自己的第一个 chunk（stage {plan.placement[0][0]}），"
         f"再把同一组送过第二个 chunk（stage {plan.placement[0][1]}），然后才轮到下一组：micro-batch 按 $p$ 个一组在 chunk 之间轮转。"
         f"预热的前向个数是 Megatron 的 $2(p-r-1)+(v-1)p$，rank 0 是 {megatron_warmup[0]} 个；"
         f"再加上稳定阶段开头的那一个前向，就是上面数出来的 {before_first_b[0]}（1F1B 的 rank 0 是 $p$ = {plain_before_b} 个）。"
         "前向多了，但每个只有 $1/v$ 的工作量。", plain_before_b=plain_before_b))

# %% [markdown]
# ## 2. 时间线：同样的 $m$，更短的灌满和排空
#
# 代价沿用前几章的默认值 `Costs()`：时间都指"一个 rank 那一份模型"，完整反向是库里的 `b + w`；
# 交错调度的一个 chunk 只花它的 $1/v$。

# %%
costs = Costs()  # default costs, no latency
md(f"前向 $F={costs.f:g}$，完整反向 $B={costs.b + costs.w:g}$；交错调度（$v={v}$）的一个 chunk 前向 {costs.f / v:g}、反向 {(costs.b + costs.w) / v:g}。")
one = simulate(build("1f1b", p, m), costs)
inter = simulate(plan, costs)
fig = plots.compare([one, inter])

# %%
formula = Fraction(p - 1, v * m + p - 1)
md(claim(abs(inter.bubble_ratio - float(formula)) < 1e-9 and inter.busy[0] == one.busy[0],
         f"$p={p}, m={m}$：1F1B 的 makespan 是 **{one.makespan:g}**，bubble 占比 {one.bubble_ratio:.1%}；"
         f"交错调度（$v={v}$）的 makespan 是 **{inter.makespan:g}**，bubble 占比 {inter.bubble_ratio:.1%}。"
         f"公式 $(p-1)/(vm+p-1) = {formula.numerator}/{formula.denominator} = {float(formula):.1%}$，与模拟一致。"
         f"每个 rank 的忙碌时间都是 {inter.busy[0]:g}：交错调度没有减少工作量，只减少了等待。",
         simulated=inter.bubble_ratio, formula=float(formula)))

# %% [markdown]
# ## 3. 为什么恰好是 $1/v$
#
# 设一个 rank 那一份模型的前向、反向时间是 $F$、$B$，一个 chunk 就是 $F/v$、$B/v$。
#
# - **灌满**：第一个 micro-batch 的前向要经过 $p-1$ 次 rank 间接力才轮到最后一个 rank 开始工作，每一棒 $F/v$，共 $(p-1)F/v$。
# - **排空**：对称地，最后一个反向要经过 $p-1$ 棒回到 rank 0，共 $(p-1)B/v$。
# - **稳定阶段**：每个 rank 要做完 $m$ 个 micro-batch 的全部 $v$ 个 chunk，总计 $m(F+B)$，与 $v$ 无关。
#
# 所以 makespan $= m(F+B) + (p-1)(F+B)/v$，bubble 占比
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
megatron_v = {vv: (tl.makespan - tl.busy[0]) / tl.busy[0] for vv, tl in sweep.items()}   # bubble time / ideal time
md(claim(all(abs(x - (p - 1) / (vv * m)) < 1e-9 for vv, x in megatron_v.items()),
         "Megatron 的论文按第 1 章的理想时间口径写：bubble 时间 / 理想时间 $= \\frac{1}{v}\\cdot\\frac{p-1}{m}$。"
         "同一张表用这个口径读：" + "，".join(f"$v={vv}$: {x:.3f}" for vv, x in megatron_v.items())
         + "，正好是 $(p-1)/(vm)$；两种口径都是把 $m$ 换成 $vm$。"))

# %% [markdown]
# ## 4. 代价一：点对点通信乘以 $v$
#
# 一个 micro-batch 每跨过一个 chunk 边界，就要把激活（反向时是梯度）发给下一个 rank。1F1B 有 $p-1$ 个边界，
# 交错调度有 $vp-1$ 个——相邻的 chunk 总在不同的 rank 上。

# %% [markdown]
# **预测：** $v=2$ 时，一次迭代的点对点消息数是 1F1B 的多少倍？（写成小数）

# %%
guess_messages = None   # 你的预测

# %% [markdown]
# 数一数计划里"依赖的生产者在另一个 rank 上"的次数：

# %%
def transfers(plan) -> int:
    """Point-to-point messages one iteration needs: dependencies whose producer sits on another rank."""
    rank_of = plan.rank_of_stage()
    return sum(1 for r, steps in enumerate(plan.ranks) for step in steps for op in ops_of(step)
               for dep in plan.dependencies(op) if rank_of[dep.stage] != r)


counts = {vv: transfers(build("1f1b", p, m) if vv == 1 else build("interleaved", p, m, v=vv)) for vv in (1, 2, 4)}
md(reveal(guess_messages, counts[v] / counts[1], claim(
    all(abs(counts[vv] / counts[1] - (vv * p - 1) / (p - 1)) < 1e-12 for vv in counts),
    "每次迭代的点对点消息数（前向加反向）：" + "，".join(f"$v={vv}$: **{c}**" for vv, c in counts.items())
    + f"。$v={v}$ 时是 1F1B 的 {counts[v] / counts[1]:.2f} 倍，正是 $(vp-1)/(p-1) = {(v * p - 1)}/{p - 1}$；"
    "消息大小不变，所以字节数也是这个倍数。", counts=counts)))

# %% [markdown]
# 这些消息各自带一段延迟。给每次跨 rank 传输加上延迟 `comm`（单位与 $F$ 相同），看交错调度的优势还剩多少。

# %% [markdown]
# **预测：** 延迟为零时 $v=4$ 比 $v=2$ 快。`comm` 从 0 起依次取 0.1、0.25、0.5、1，到哪一个值时 $v=4$ 第一次不比 $v=2$ 快？

# %%
guess_crossover = None   # 0.1、0.25、0.5 或 1

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
md(reveal(guess_crossover, crossover, claim(crossover is not None and crossover > 0,
          "延迟为零时 $v$ 越大越快；延迟增大后，多出来的 $(vp-1)$ 次传输开始占据关键路径，"
          f"`comm` $\\ge {crossover:g}$ 时 $v=4$ 已经不比 $v=2$ 快。所以 $v$ 要和延迟一起选。"
          "这里的模拟把每次传输的延迟全部算进关键路径；Megatron 把交错调度的点对点通信和计算重叠起来，"
          "真实系统里交叉点会往后挪。", crossover=crossover)))

# %% [markdown]
# ## 5. 代价二：预热阶段多存的激活
#
# 内存按"一个 micro-batch 在一个 rank 那一份模型上的激活"计（1F1B 的 rank 0 峰值是 $p$）。交错调度的一个 chunk 只存 $1/v$ 份，
# 但预热阶段做了更多前向。

# %% [markdown]
# **预测：** $p=4$、$m=8$ 时，1F1B 的 rank 0 峰值是 4 份。交错调度 $v=2$ 时 rank 0 的峰值是多少份？$v=4$ 时比 $v=2$ 多还是少？先写 $v=2$ 的数。

# %%
guess_peak_v2 = None   # 你的预测（份）

# %%
peaks = {vv: tl.peak_activations for vv, tl in sweep.items()}
closed_peak = {vv: [p + (p - 1 - 2 * r) / vv for r in range(p)] for vv in peaks if vv > 1}
assert all(abs(a - b) < 1e-9 for vv, want in closed_peak.items() for a, b in zip(peaks[vv], want))
md(reveal(guess_peak_v2, peaks[2][0], claim(peaks[2][0] > peaks[4][0] > peaks[1][0],
          "各 rank 的激活峰值：" + "；".join(f"$v={vv}$: {[round(x, 3) for x in pk]}" for vv, pk in peaks.items())
          + f"。rank 0 从 {peaks[1][0]:g}（1F1B）变成 {peaks[2][0]:g}（$v=2$）和 {peaks[4][0]:g}（$v=4$）："
          "rank $r$ 在第一个反向之前存着 $2(p-r-1)+(v-1)p+1$ 个 chunk 的激活，每个 $1/v$ 份，合起来是 "
          "$p + (p-1-2r)/v$ 份。rank 0 比 1F1B 多存 $(p-1)/v$ 份，$v$ 越大多得越少：激活显存不是限制 $v$ 的理由。",
          peaks=peaks)))
for vv in (2, 4):   # the library's closed form says the same
    assert list(formulas.predict("interleaved", p, m, costs, v=vv).peak_activations) == peaks[vv]
fig = plots.compare([sweep[1], sweep[2]], memory_too=True)

# %% [markdown]
# ## 6. 整除约束，以及 torch 怎样放宽它
#
# Megatron 的经典顺序让 rank 按 $p$ 个 micro-batch 一组在 chunk 之间轮转，$m$ 不是 $p$ 的倍数时最后一组不完整。本库的 `interleaved` 实现的是这个经典版本，会给出一行清楚的错误：

# %%
for bad_m in (6, 3):
    try:
        build("interleaved", p, bad_m, v=v)
    except ValueError as err:
        print(f"m={bad_m}: {err}")

# %% [markdown]
# 这不是交错调度本身的限制。torch 的 `ScheduleInterleaved1F1B`（第 8 节拿来对照的正是这个类）用了 Llama 3 训练时的放宽版（flex_pp）：
# 轮数 $R = \max(1, \lfloor m/p \rfloor)$，每组 $m/R$ 个 micro-batch，只要求 $m$ 能被 $R$ 整除；预热前向 $(v-1)\cdot m/R + 2(p-r-1)$ 个。
# 本库的 `interleaved-flex` 按同样的规则排，下一格把它和 torch 排出的顺序逐个算子比较：

# %%
from course.torch_bridge import torch_plan  # noqa: E402  (imports torch)

flex_rows, flex_same, flex_formula = [], [], []
for mm in range(1, 3 * p + 1):
    try:
        ours = build("interleaved-flex", p, mm, v=v)
    except ValueError:
        flex_rows.append(f"| {mm} | — | — | — | 拒绝：{mm} 不能被 {max(1, mm // p)} 轮整除 |")
        continue
    theirs_flex = torch_plan("ScheduleInterleaved1F1B", p, mm, v=v)
    flex_same.append(theirs_flex.format() == ours.format() and theirs_flex.placement == ours.placement)
    tl = simulate(ours, costs)
    if mm >= p:   # the bubble formula still holds once every group fills the pipeline
        flex_formula.append(abs(tl.bubble_ratio - (p - 1) / (v * mm + p - 1)) < 1e-9)
    flex_rows.append(f"| {mm} | {mm // max(1, mm // p)} | {tl.bubble_ratio:.1%} | {tl.peak_activations[0]:g} | "
                     f"{'相同' if flex_same[-1] else '**不同**'} |")
md(f"$p={p}$、$v={v}$：\n\n| m | 组大小 | bubble | rank 0 峰值 | 与 torch 的顺序 |\n|---|---|---|---|---|\n" + "\n".join(flex_rows))
flex_peak = {mm: simulate(build("interleaved-flex", p, mm, v=v)).peak_activations[0] for mm in (p + 1, 2 * p - 1, 2 * p)}
md(claim(all(flex_same) and all(flex_formula) and flex_peak[2 * p - 1] > flex_peak[2 * p],
         f"torch 接受的每一个 $m$，两边的顺序逐个算子相同（{len(flex_same)} 个）；$m \\ge p$ 时 bubble 仍是 $(p-1)/(vm+p-1)$。"
         f"代价在显存：组比 $p$ 大时预热做了更多前向，例如 $m={2 * p - 1}$ 时 rank 0 峰值 {flex_peak[2 * p - 1]:g} 份，"
         f"比 $m={2 * p}$ 的 {flex_peak[2 * p]:g} 还多。$m$ 是 $p$ 的倍数（且大于 $p$）时，它和 Megatron 的经典顺序完全一样。",
         same=flex_same, peaks=flex_peak))

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
# **任务：** 保持 `p=4`、`m_per_p=2`，把 `comm` 调到 0.25，拖动 `v`（1 到 4）：哪个 $v$ 的 makespan 最短？

# %%
answer_best_v = None   # 1、2、3 或 4

# %%
TASK_COMM = 0.25
task_spans = {vv: simulate(build("1f1b", 4, 8) if vv == 1 else build("interleaved", 4, 8, v=vv), Costs(comm=TASK_COMM)).makespan
              for vv in (1, 2, 3, 4)}
best_v = min(task_spans, key=task_spans.get)
md(reveal(answer_best_v, best_v, f"comm={TASK_COMM:g} 时各 $v$ 的 makespan："
          + "，".join(f"$v={vv}$: {x:.4g}" for vv, x in task_spans.items())
          + "。延迟不为零时，最好的 $v$ 在中间：再切细，省下的灌满时间抵不过多出来的传输。"))

# %% [markdown]
# ## 8. 和 torch.distributed.pipelining 对照
#
# PyTorch 自带的 `ScheduleInterleaved1F1B` 也实现了 Megatron 的交错顺序（$m$ 是 $p$ 的倍数时就是经典版本，见第 6 节）。`course.torch_bridge` 不建进程组、不建模型，
# 只把它排出的 `pipeline_order` 翻译成本库的 `Plan`，于是可以逐个算子比较，并放进同一个模拟器：

# %%
theirs = torch_plan("ScheduleInterleaved1F1B", p, m, v=v)
same_order = theirs.format() == plan.format() and theirs.placement == plan.placement
md(claim(same_order, f"$p={p}, m={m}, v={v}$：torch 的顺序与本库的 `interleaved` 逐个算子完全相同；"
         f"模拟的 makespan 分别是 {simulate(theirs, costs).makespan:g} 和 {inter.makespan:g}。"))

# %% [markdown]
# 交错调度还有一个选择：几个 micro-batch 同时能进入不同的 chunk 时先做哪个。Megatron 和 torch 的 `ScheduleInterleaved1F1B`
# 都是**深度优先**（depth-first）：先把早的 micro-batch 推到更深的 chunk，所以按 $p$（或 torch 的组大小）个一组轮转。
# 另一种是**广度优先**（breadth-first，Lamy-Poirier 的 Breadth-First Pipeline Parallelism；torch 的 `ScheduleLoopedBFS`）：
# 所有 micro-batch 先过完第一个 chunk，再过第二个，激活存得更多，但每个 chunk 的通信可以和数据并行的梯度同步更好地重叠。
# Llama 3 的训练让这两者之间可调。
#
# ## 9. 真跑一遍：多进程上的交错调度
#
# 同一个 `Plan` 交给 `course.live`：每个 rank 一个 gloo 进程，每个进程持有 $v$ 个不相邻的 chunk（一叠 Linear+Tanh），
# 激活和梯度用带标签的异步消息传递。运行结束后，每个参数的梯度都和单进程在整个 batch 上算出的梯度比较。
# `emulate=True` 把每个算子补齐到模型里的时长，所以测得的时间线应当和模拟的形状一致。

# %%
from course.live import run_plan  # noqa: E402  (starts processes only when called)

live_plan = build("interleaved", 2, 4, v=2)
live = run_plan(live_plan, Costs(), emulate=True)
md(claim(live.grad_ok, f"$p={live_plan.p}$、$v={len(live_plan.placement[0])}$、$m={live_plan.m}$：每个参数的梯度与单进程参照"
         f"一致（最大绝对误差 {live.max_abs_err:.1e}）。", max_abs_err=live.max_abs_err)
   + f"一个代价单位模拟 {live.unit_ms:g} ms 的设备时间：测得的 makespan {live.measured_makespan:.3g} s，"
   f"模拟预测 {live.simulated_makespan:.3g} s，比值 {live.ratio:.2f}"
   + claim(0.8 <= live.ratio <= 1.3, "，时间线的形状和模拟一致。",
           otherwise="：差得较多，说明这台机器上进程在抢 CPU，算子本身就超过了模拟的设备时间（emulate 只能补齐，不能压缩）。"))
fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 3.6))
plots.gantt(live.timeline, ax=top, title=f"measured: {live.measured_makespan:.3g} s (emulated device time)")
plots.gantt(live.simulated, ax=bottom, title=f"simulated: {live.simulated.makespan:g} cost units")
fig.tight_layout()

# %% [markdown]
# ## 怎么讲清楚
#
# - 交错调度把模型切成 $vp$ 个 chunk，rank $r$ 持有第 $r, r+p, \dots$ 个；micro-batch 在 rank 之间绕 $v$ 圈。
# - 灌满和排空由"一个 chunk 的时间"决定，缩短为 $1/v$；每个 rank 的工作量 $m(F+B)$ 不变，所以 bubble 占比是 $(p-1)/(vm+p-1)$
#   （Megatron 的口径：$\frac{1}{v}\cdot\frac{p-1}{m}$），效果相当于把 micro-batch 数乘以 $v$ 而不缩小 micro-batch。
# - 代价：点对点消息从 $p-1$ 变成 $vp-1$（约 $\times v$），延迟大时收益被吃掉，最好的 $v$ 要和延迟一起选；层数必须能被 $vp$ 整除。
# - 激活：rank $r$ 的峰值 $p + (p-1-2r)/v$ 份，rank 0 比 1F1B 多 $(p-1)/v$，$v$ 越大多得越少。
# - 整除：Megatron 的经典顺序要 $m$ 是 $p$ 的倍数；torch 的 `ScheduleInterleaved1F1B`（本库 `interleaved-flex`）只要 $m$ 能被轮数 $\max(1,\lfloor m/p\rfloor)$ 整除，组变大时多存激活。
# - 模拟和真跑用的是同一个 `Plan`：梯度逐个与单进程对齐，测得的时间线可以和模拟对照；torch 的 `ScheduleInterleaved1F1B`
#   排出的顺序也能翻译成同一种 `Plan`，逐个算子比较。
#
# ## 练习
#
# - `interleaved-order`（★★★）：按 Megatron 的前向顺序，用模拟器找出每个 rank 最少要几个 warm-up 前向；再和 Megatron 的
#   $2(p-r-1)+(v-1)p$ 比一比，想想多出来的前向什么时候有用（加上 `comm` 试试）。
# - `interleaved-memory`（★★☆）：推出交错调度每个 rank 的激活峰值，看它和 1F1B 的 $p$ 比是多还是少。
#
# ```bash
# python practice/judge.py start interleaved-order
# python practice/judge.py start interleaved-memory
# ```
