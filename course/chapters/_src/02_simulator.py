# %% [markdown]
# # 第 2 章　调度模拟器：plan、依赖和事件驱动
#
# 第 1 章的 bubble 公式只在"每个 stage 一样快、通信不花时间"时成立。真实的流水线有快有慢、有通信延迟，调度也不止 GPipe 一种。这一章把调度写成一种小小的中间表示（plan），再用一个事件驱动的模拟器把任意 plan 变成时间线。后面各章的新调度、真机运行和 JCT 分析都建立在这两样东西上。术语对照见[术语表](glossary.md)。
#
# ## 自测
#
# 1. 一个 plan 要写清哪两类信息？
# 2. stage $s$ 上 micro-batch $i$ 的反向 B 要等哪些操作做完？最后一个 stage 呢？
# 3. GPipe 和 1F1B 的 bubble 一样吗？每个 stage 同时保存的激活份数呢？
# 4. 每个 rank 自己的顺序都"先 F 后 B"，整个 plan 还可能卡死吗？
# 5. 模拟器为什么按事件推进，而不是每个时间单位走一步？
# 6. 点对点延迟对 GPipe 和 1F1B 的影响一样吗？
#
# <details>
# <summary>参考答案</summary>
#
# 1. 每个 rank 按什么顺序执行哪些操作（F/B/W、第几个 micro-batch、哪个 stage），以及 stage 放在哪个 rank 上（placement）。
# 2. 同一 stage 上它自己的前向 $F_i$，以及下一个 stage $s+1$ 的 $B_i$（梯度从后往前传）。最后一个 stage 只等自己的 $F_i$：loss 在那里算。
# 3. bubble 一样，都是 $\frac{p-1}{m+p-1}$。激活不一样：GPipe 每个 stage 存 $m$ 份；1F1B 的 stage $s$ 最多存 $\min(m, p-s)$ 份，$m \ge p$ 之后与 $m$ 无关。
# 4. 可能。rank 0 等 rank 1 的梯度，rank 1 却在等 rank 0 一个排在后面的前向，两边互相等，这就是死锁。局部检查发现不了，要看跨 rank 的依赖有没有环。
# 5. 操作耗时是任意实数（实测的毫秒数、不均匀的 stage），没有公共的"时间单位"；按事件推进时，每个操作只产生一次"完成"事件，模拟的代价只和操作数有关，和时间长短无关。
# 6. 不一样。GPipe 只在灌满和排空时付延迟；1F1B 的稳定阶段里，做完一个前向就等这个 micro-batch 的梯度回来，往返延迟直接变成空闲，所以 1F1B 对延迟更敏感。
#
# </details>

# %%
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import plots
from course.claims import claim, reveal
from course.costs import Costs
from course.plan import Op, Plan, PlanError
from course.schedules import REGISTRY, build
from course.sim import DeadlockError, simulate
from course.widgets import explore


def md(text: str) -> None:
    """Show prose whose numbers come from this notebook's cells."""
    display(Markdown(text))

# %% [markdown]
# ## 1. plan：每个 rank 的操作清单
#
# 一个 *plan* 就是流水线论文里那种表格：每个 rank 一行，按执行顺序列出操作。`F3` 是 micro-batch 3 的前向，`B0` 是 micro-batch 0 的反向。

# %%
P, M = 4, 8
plan = build("1f1b", P, M)
md(f"$p={P}$、$m={M}$ 的 1F1B（这个调度也叫 PipeDream-Flush，是 Megatron-LM 不交错时的调度）：")
print(plan.format())

# %% [markdown]
# 每一行读起来就是第 1 章里的调度：rank 0 先做几个前向"预热"，然后一个前向一个反向交替（稳定阶段），最后把剩下的反向做完（收尾）。
#
# plan 也可以手写，再用 `Plan.parse` 读回来。`validate()` 在模拟之前检查它是不是一个完整的流水线：每个需要的操作恰好出现一次、放在持有该 stage 的 rank 上、同一 rank 上不会先做反向再做前向。违反时报错信息指出第一处问题：

# %%
broken_plans = {
    "missing B1 on rank 0": "F0 F1 B0\nF0 F1 B0 B1",
    "B before its own F":   "F0 B0 F1 B1\nF0 B1 F1 B0",
    "F3 when m=2":          "F0 F1 B0 B1 F3\nF0 F1 B0 B1",
}
for what, text in broken_plans.items():
    try:
        Plan.parse(text, num_microbatches=2).validate()
        print(f"{what}: accepted")
    except PlanError as err:
        print(f"{what}:\n    PlanError: {err}")

# %% [markdown]
# ## 2. 依赖：谁等谁
#
# 调度只规定了每个 rank 内部的顺序；跨 rank 的等待来自数据依赖：
#
# - stage $s$ 的 $F_i$ 要等 stage $s-1$ 的 $F_i$（需要它的输出激活）；
# - stage $s$ 的 $B_i$ 要等同一 stage 的 $F_i$（需要保存的激活），以及 stage $s+1$ 的 $B_i$（需要传回来的梯度）；最后一个 stage 的 $B_i$ 只等自己的 $F_i$。
#
# `plan.dependencies(op)` 直接给出这份清单：

# %%
for op in (Op("F", 2, 0), Op("F", 2, 1), Op("B", 2, 1), Op("B", 2, 3)):
    deps = ", ".join(str(d) for d in plan.dependencies(op)) or "nothing"
    print(f"{op} waits for: {deps}")

# %% [markdown]
# ## 3. 事件驱动的模拟
#
# 模拟器的规则只有一条：**一个 rank 按 plan 的顺序执行，下一个操作在"本 rank 空闲"且"所有依赖都已完成（跨 rank 的再加上传输延迟）"时立刻开始。**
#
# `course/sim.py` 里的 `simulate` 就是这条规则的直接写法（一百来行，只用标准库，值得从头读一遍）。它不按时间单位一格一格走，而是维护一个按时间排序的**完成事件**队列，一个事件 `(t, r)` 的意思是"rank $r$ 正在做的这一步在时刻 $t$ 结束"：
#
# 1. 先检查 plan 本身（`plan.validate()`：每个操作恰好出现一次、在持有它那个 stage 的 rank 上、B 排在自己的 F 之后……），再由 `Costs.durations` 算出每一步的耗时。
# 2. 每个 rank 尝试启动第一步。输入都已算完，就定下开始时刻 = max(本 rank 空闲的时刻, 每个输入的完成时刻，跨 rank 的再加 `comm`)，把这一步的完成事件放进队列；有输入还没算出来，rank 就挂在那个操作上等。
# 3. 反复取出最早的完成事件：记下这一步里每个操作的完成时刻，让挂在这些操作上的 rank 重试，再让本 rank 尝试下一步。
# 4. 队列空了就结束。还有 rank 没做完，就是死锁：每个卡住的 rank 都挂在一个永远算不出来的操作上，报告说出它在等谁（第 5 节）。
#
# 每一步恰好产生一个完成事件（重叠的 `F&B` 对算一步），所以事件数等于步数，和时间的长短无关；时间从一个事件直接跳到下一个，耗时可以是任意实数。`simulate(..., trace=事件列表)` 会把处理过的事件按顺序记下来。下面是 1F1B 的前 8 个完成事件，耗时刻意选成非整数：

# %%
F, BACKWARD = 0.7, 1.3
trace = []                  # simulate 按处理顺序记下的完成事件：(时刻, rank, 这一步)
tl = simulate(plan, Costs(f=F, b=BACKWARD / 2, w=BACKWARD / 2), trace=trace)
for t, rank, step in trace[:8]:
    print(f"t={t:5.2f}  rank {rank} finishes {str(step):6s}")
n_steps = sum(len(steps) for steps in plan.ranks)
formula = (plan.m + plan.p - 1) * (F + BACKWARD)
md(claim(len(trace) == n_steps and [t for t, _, _ in trace] == sorted(t for t, _, _ in trace)
         and abs(tl.makespan - formula) < 1e-9,
         f"整个 plan 有 **{n_steps}** 步，模拟恰好处理了 **{len(trace)}** 个完成事件，而且按时刻先后处理；"
         f"F={F:g}、完整反向 {BACKWARD:g} 时 makespan 是 {tl.makespan:.2f}，第 1 章的公式 $(m+p-1)(F+B)$ 给出 "
         f"{formula:.2f}：各 stage 一样快时，非整数耗时下公式照样成立。",
         steps=n_steps, events=len(trace), makespan=tl.makespan, formula=formula))

# %% [markdown]
# 练习 `event-simulator` 会让你自己写出这个模拟器；`course.sim.simulate` 是参考实现，出错时（见第 5 节）它会说明每个卡住的 rank 在等什么。要模拟成千上万次的地方（第 7 章的排序搜索、基准测试）用 `course.sim_compiled.CompiledPlan`：同一条规则，先把 plan 编译成扁平的列 (list) 再跑，专为大量模拟而写（`benchmarks/bench_simulator.py` 在同一次运行里测出两者各自相对种子模拟器的速度比）；测试保证两个模拟器在每个调度、随机的代价和乱序的 plan 上给出逐位相同的时间线和同样的死锁报告。
#
# ## 4. GPipe 与 1F1B：同样的 bubble，不同的显存
#
# 把两个调度放在同一条时间轴上，右边是每个 rank 同时保存的激活份数（一份 = 一个 micro-batch 在一个 stage 上的激活）。激活在 F 开始时分配，在这个 micro-batch 的反向做完时释放：

# %%
gpipe_tl = simulate(build("gpipe", P, M), Costs())
ofob_tl = simulate(build("1f1b", P, M), Costs())
plots.compare([gpipe_tl, ofob_tl], memory_too=True)
plt.show()
md(claim(gpipe_tl.makespan == ofob_tl.makespan and gpipe_tl.bubble_ratio == ofob_tl.bubble_ratio,
         f"两者 makespan 都是 **{gpipe_tl.makespan:g}**，bubble 都是 **{gpipe_tl.bubble_ratio:.1%}**。"
         f"峰值激活：GPipe 每个 rank 都是 {gpipe_tl.peak_activations}，1F1B 是 {ofob_tl.peak_activations}。",
         gpipe=gpipe_tl.makespan, one_f_one_b=ofob_tl.makespan))

# %% [markdown]
# 第 1 章说增大 $m$ 能压低 bubble。下表看增大 $m$ 时两种调度的峰值激活：

# %%
rows = []
for m in (4, 8, 16, 32):
    g, o = simulate(build("gpipe", P, m)), simulate(build("1f1b", P, m))
    assert g.bubble_ratio == o.bubble_ratio
    rows.append(f"| {m} | {g.bubble_ratio:.1%} | {max(g.peak_activations):g} | {max(o.peak_activations):g} |")
md(f"p = {P}：\n\n| m | bubble (both) | GPipe peak | 1F1B peak (rank 0) |\n|---|---|---|---|\n" + "\n".join(rows))
md(claim(all(max(simulate(build("gpipe", P, m)).peak_activations) == m
             and max(simulate(build("1f1b", P, m)).peak_activations) == P for m in (4, 8, 16, 32)),
         f"GPipe 的峰值随 $m$ 增长（就是 $m$）；1F1B 的停在 $p$ = {P}。有了 1F1B，增大 $m$ 不再需要更多激活显存。"))

# %% [markdown]
# 1F1B 里 stage $s$ 先做 $p-s-1$ 个预热前向，再进入"一前一后"：做一个前向，新的激活进来；做一个反向，最老的激活释放。所以 $m$ 够多时它手里最多有 $p-s$ 份。第 1 章自测第 5 题说 GPipe 要存 $m$ 份；1F1B 把它压到了 $p-s$。可是 micro-batch 不够多时呢？

# %% [markdown]
# **预测：** $p=4$、只有 2 个 micro-batch 的 1F1B，四个 rank 的峰值激活各是多少？写成一个列表。

# %%
guess_peaks = None   # 例如 [4, 3, 2, 1]

# %%
FEW = 2
few = simulate(build("1f1b", P, FEW))
md(reveal(guess_peaks, few.peak_activations,
          f"只有 {FEW} 个 micro-batch 时，前面的 stage 存不到 $p-s$ 份：预热还没做满，micro-batch 就用完了，"
          f"手里最多是全部的 {FEW} 份。"))
law = {m: simulate(build("1f1b", P, m)).peak_activations for m in range(1, 2 * P + 1)}
md(claim(all(pk == [min(m, P - s) for s in range(P)] for m, pk in law.items()),
         f"对 $m$ = 1..{2 * P} 逐一模拟，stage $s$ 的峰值都是 $\\min(m, p-s)$：$m \\ge p$ 之后才与 $m$ 无关。"))

# %% [markdown]
# ### 4.1 换成字节：一层激活有多大，rank 0 为什么存下一整个模型
#
# 上面的"一份"是一个 micro-batch 在一个 stage 上的激活。到了显卡上要问的是字节。Korthikanti 等人（2022，*Reducing Activation Recomputation in Large Transformer Models*）逐个张量数过一层 transformer 为反向保存的激活：激活用 16 位、dropout mask 每个元素 1 字节、FFN 宽 $4h$、注意力分数矩阵要存下来（不用 flash attention）时，一层对一个 micro-batch 保存 $sbh(34 + 5as/h)$ 字节，$s$ 是序列长度，$b$ 是 micro-batch 大小，$h$ 是 hidden，$a$ 是注意力头数。tensor parallel（TP，大小 $t$）、sequence parallel（SP）和重算（recompute）各自去掉或切分其中一部分。`course.memory` 把每个张量列成一项，下面用 GPT-3 175B（$s=2048$、$b=1$、$t=8$）把论文里的几种设置算一遍，再和论文的闭式公式对一下：

# %%
from course.memory import PRESETS, ActivationConfig, korthikanti_layer_bytes, layer_activation_bytes, pipeline_memory
from course.widgets import memory_explorer

GPT3 = PRESETS["gpt3-175b"]
SEQ, TP = 2048, 8
SETTINGS = [("不并行", 1, False, "none", "sbh(34 + 5as/h)"),
            ("TP", TP, False, "none", "sbh(10 + 24/t + 5as/(ht))"),
            ("TP + SP", TP, True, "none", "\\frac{sbh}{t}(34 + 5as/h)"),
            ("TP + SP + 选择性重算", TP, True, "selective", "34sbh/t"),
            ("完全重算", TP, False, "full", "2sbh")]
per_layer = {}
for label, t, sp, rc, formula in SETTINGS:
    got = layer_activation_bytes(GPT3, ActivationConfig(SEQ, 1, t, sp, rc))
    assert got == korthikanti_layer_bytes(SEQ, 1, GPT3.hidden, GPT3.heads, t, sp, rc)
    per_layer[label] = got
md("| 设置 | 公式 | 每层、每个 micro-batch |\n|---|---|---|\n"
   + "\n".join(f"| {label} | ${formula}$ | {per_layer[label]:,} 字节（{per_layer[label] / 1e6:,.1f} MB） |"
               for label, _, _, _, formula in SETTINGS))
score_share = 5 * GPT3.heads * SEQ / GPT3.hidden / (34 + 5 * GPT3.heads * SEQ / GPT3.hidden)
md(claim(score_share > 0.5,
         f"不并行时，注意力分数那一项 $5as/h$ 占了一层激活的 **{score_share:.0%}**：它随 $s^2$ 增长。"
         "选择性重算只重算注意力核心（$QK^T$、softmax、dropout、乘 $V$），正好去掉这一项，"
         f"所以 TP + SP 下从 {per_layer['TP + SP'] / 1e6:.0f} MB 降到 {per_layer['TP + SP + 选择性重算'] / 1e6:.0f} MB，"
         "而重算的计算量很小。", score_share=score_share))

# %% [markdown]
# 再把每层的字节放回 1F1B。rank 0 最多同时存 $p$ 个 micro-batch，每个 micro-batch 在它那里有 $L/p$ 层：

# %%
cfg_sel = ActivationConfig(SEQ, 1, TP, True, "selective")
bytes_per_layer = layer_activation_bytes(GPT3, cfg_sel)
rank0 = {p: pipeline_memory(build("1f1b", p, 4 * p), GPT3, cfg_sel, extras=False).ranks[0].activations
         for p in (2, 4, 8, 16)}
md("| p | 每个 stage 的层数 | rank 0 的激活峰值 |\n|---|---|---|\n"
   + "\n".join(f"| {p} | {GPT3.layers // p} | {v / 1e9:.2f} GB |" for p, v in rank0.items()))
md(claim(all(v == GPT3.layers * bytes_per_layer for v in rank0.values()),
         f"不管 $p$ 是多少，rank 0 的激活峰值都是 **{GPT3.layers * bytes_per_layer / 1e9:.2f} GB** = "
         f"{GPT3.layers} 层 × {bytes_per_layer / 1e6:.1f} MB：$p$ 个 micro-batch × $L/p$ 层，"
         "正好是**整个模型对一个 micro-batch 的激活**。加深流水线能把权重、梯度和优化器状态分到更多卡上，"
         "却分不掉 rank 0 的激活；要省它，只能靠重算、TP/SP 或更小的 micro-batch。",
         rank0=rank0, whole_model=GPT3.layers * bytes_per_layer))

# %% [markdown]
# 最后把权重、梯度和 Adam 状态（混合精度下每个参数 16 字节）也加进来，画出 $p=8$、$m=32$ 时每个 rank 一次迭代里持有的 GB（embedding 在第一个 stage，lm_head 和 loss 的 logits 在最后一个 stage）。虚线是一张 80 GB 的卡：

# %%
GPU = 80e9
real = {s: pipeline_memory(build(s, 8, 32), GPT3, cfg_sel) for s in ("gpipe", "1f1b")}
fig, axes = plt.subplots(1, 2, figsize=(14, 3.6), sharey=True)
for ax, (name, pm) in zip(axes, real.items()):
    plots.memory(pm.timeline, ax=ax, curves=pm.curves(), gpu_mem=GPU, title=f"GPT-3 175B, {name}, p=8, m=32, tp=8 + SP")
plt.show()
peak_gpipe, peak_1f1b = (max(pm.peak) for pm in real.values())
md(claim(peak_gpipe > GPU >= peak_1f1b,
         f"GPipe 的每个 rank 都要存下全部 32 个 micro-batch，峰值 **{peak_gpipe / 1e9:.1f} GB**，装不进 80 GB；"
         f"1F1B 的峰值在 rank 0，**{peak_1f1b / 1e9:.1f} GB**，其中 {real['1f1b'].ranks[0].static / 1e9:.1f} GB 是权重、"
         "梯度和优化器状态。两者 bubble 相同，1F1B 省下的全是激活。", gpipe=peak_gpipe, one_f_one_b=peak_1f1b))

# %% [markdown]
# 下面换成 Llama 3 70B（$s=8192$，GQA、SwiGLU，没有 dropout；`course.memory` 按这种 block 的真实张量逐项计数）。拖动 $p$、$m$、TP 和重算方式，看每个 rank 的 GB（左：权重、梯度、优化器状态和激活峰值叠在一起；右：一次迭代中持有的字节）和 80 GB 那条线。TP 大于 1 时同时打开 SP。

# %%
memory_explorer("llama3-70b", seq=8192, gpu_mem=GPU)

# %% [markdown]
# **任务：** 在上面的 widget 里保持 $p=8$、$m=16$、TP=8，依次换三种重算方式。哪几种能让所有 rank 都装进 80 GB？按 none、selective、full 的顺序写成列表。

# %%
answer_recompute_fits = None   # 例如 ["full"]

# %%
LLAMA70 = PRESETS["llama3-70b"]
peaks_70b = {rc: max(pipeline_memory(build("1f1b", 8, 16), LLAMA70, ActivationConfig(8192, 1, 8, True, rc)).peak)
             for rc in ("none", "selective", "full")}
fits_70b = [rc for rc, peak in peaks_70b.items() if peak <= GPU]
md(reveal(answer_recompute_fits, fits_70b,
          "三种方式的峰值：" + "，".join(f"{rc} {peak / 1e9:.1f} GB" for rc, peak in peaks_70b.items())
          + "。序列长到 8192 时，不重算的注意力分数（$2as^2b$）一项就压垮了 rank 0。"))

# %% [markdown]
# 练习 `one-f-one-b-order` 让你写出每个 stage 的 1F1B 顺序，`peak-activations` 让你从每个 rank 的操作序列算出峰值激活。
#
# ## 5. 会卡死的 plan
#
# 下面两个 rank 各自的顺序都合法（每个 B 都在自己的 F 之后），`validate()` 也通过；但 rank 0 做完 $F_0$ 就去等 $B_0$ 的梯度，而 rank 1 第一件事是等 $F_1$，$F_1$ 却排在 rank 0 的 $B_0$ 之后：

# %%
stuck = Plan.parse("""
F0 B0 F1 B1    # rank 0
F1 B1 F0 B0    # rank 1
""")
stuck.validate()
try:
    simulate(stuck)
except DeadlockError as err:
    print("DeadlockError:", err)
    print("waits:", err.waits)

# %% [markdown]
# 模拟器不会无限循环：队列空了而还有 rank 没做完，它就报告每个卡住的 rank 停在哪一步、缺哪个操作、那个操作排在谁的第几步。真实的多进程程序遇到同样的 plan 会一直挂着，第 3 章和第 8 章会看到怎样用看门狗和这份清单找到它。
#
# ## 6. 不均匀的 stage
#
# 真实模型很难切得一样重：最后一个 stage 常常多了 lm_head 和 loss，第一个 stage 多了 embedding。`Costs` 的 `f`、`b`、`w` 可以给一个列表，每个 stage 一个值。

# %% [markdown]
# **预测：** $p=4$ 个 stage 里有一个比别的重一半（F、b、w 都 ×1.5）。它放在哪个位置（0 到 3）时，1F1B 的 makespan 最短？GPipe 呢？

# %%
guess_heavy_position = None   # 0, 1, 2 或 3

# %%
HEAVY = 1.5
by_position = {}
for pos in range(P):
    h = [HEAVY if s == pos else 1.0 for s in range(P)]
    c = Costs(f=h, b=h, w=h)
    by_position[pos] = (simulate(build("1f1b", P, M), c).makespan, simulate(build("gpipe", P, M), c).makespan)
md("| 重 stage 的位置 | 1F1B makespan | GPipe makespan |\n|---|---|---|\n"
   + "\n".join(f"| {pos} | {a:g} | {g:g} |" for pos, (a, g) in by_position.items()))
best = min(by_position, key=lambda pos: by_position[pos][0])
ofob_spans = [a for a, _ in by_position.values()]
md(reveal(guess_heavy_position, best, claim(
    all(x < y for x, y in zip(ofob_spans, ofob_spans[1:])) and len({g for _, g in by_position.values()}) == 1,
    f"1F1B 里重的 stage 越靠前越好：从位置 0 到 {P - 1}，makespan 是 {' / '.join(f'{x:g}' for x in ofob_spans)}。"
    "重 stage 是瓶颈，它自己的空闲决定了多出来的时间：放在前面，它不用等前面的 stage 灌满，"
    "做完最后一个反向也不用等梯度再往前传；放在最后，开头要等前面所有的前向，结尾还要等梯度穿过前面所有 stage。"
    f"GPipe 在四个位置都是 {by_position[0][1]:g}：它先做完全部前向，位置不影响。", makespans=ofob_spans)))

# %% [markdown]
# 看最坏的情形：最后一个 stage 重一半。

# %%
heavy = [1.0, 1.0, 1.0, HEAVY]
uneven = Costs(f=heavy, b=heavy, w=heavy)   # full backward = b + w = 2 x forward on every stage
uneven_tl = simulate(build("1f1b", P, M), uneven)
plots.gantt(uneven_tl, title="1F1B, last stage 1.5x heavier")
plt.show()
stage_time = [3 * f for f in heavy]          # F + full backward of one micro-batch on each stage
bound = M * max(stage_time)                  # the slowest stage must do all of its own work
even = sum(heavy) / P
balanced = simulate(build("1f1b", P, M), Costs(f=even, b=even, w=even))
last_heavy = (M - 1) * max(stage_time) + sum(stage_time)   # fill + the heavy stage's m ops + drain
assert abs(uneven_tl.makespan - last_heavy) < 1e-9
md(claim(uneven_tl.makespan > bound and balanced.makespan < uneven_tl.makespan,
         f"makespan 从 {ofob_tl.makespan:g} 变成 **{uneven_tl.makespan:g}**，bubble 从 {ofob_tl.bubble_ratio:.1%} 变成 "
         f"**{uneven_tl.bubble_ratio:.1%}**。最慢的 stage 必须做完自己的 {M} 份活，这给了下界 "
         f"$m \\cdot \\max_s(F_s+B_s)$ = {bound:g}；实际多出的 {uneven_tl.makespan - bound:g} 是它的等待："
         "开头等前面的 stage 把第一个 micro-batch 送过来，结尾等最后一个梯度穿过前面的 stage。重 stage 在最后时正好是 "
         f"$(m-1)\\max_s(F_s+B_s) + \\sum_s(F_s+B_s)$ = {last_heavy:g}。"
         f"同样的总工作量平均分给 {P} 个 stage，makespan 是 {balanced.makespan:g}。怎样切得更匀，是第 7 章的话题。",
         makespan=uneven_tl.makespan, bound=bound, balanced=balanced.makespan))

# %% [markdown]
# ## 7. 点对点延迟
#
# `Costs(comm=c)`：一个操作的结果送到另一个 rank 要多花 $c$。

# %% [markdown]
# **预测：** 每次跨 rank 的传输多花 $c=1$ 个单位，GPipe 和 1F1B 的 makespan 各多出多少？写成 `[GPipe, 1F1B]`。

# %%
guess_latency = None   # 例如 [6, 6]

# %%
latencies = [0.0, 0.25, 0.5, 1.0]
span = {s: [simulate(build(s, P, M), Costs(comm=c)).makespan for c in latencies] for s in ("gpipe", "1f1b")}
fig, ax = plt.subplots(figsize=(6, 3))
for s, ys in span.items():
    ax.plot(latencies, ys, "o-", label=s)
ax.set_xlabel("p2p latency c (cost units)")
ax.set_ylabel("makespan")
ax.set_title(f"p={P}, m={M}, F=1, backward=2", fontsize=10)
ax.legend()
plt.show()
c = latencies[-1]
extra = {s: span[s][-1] - span[s][0] for s in span}
assert abs(extra["gpipe"] - 2 * (P - 1) * c) < 1e-9
md(reveal(guess_latency, [extra["gpipe"], extra["1f1b"]], claim(extra["1f1b"] > extra["gpipe"],
          f"延迟 c={c:g} 时，GPipe 多了 **{extra['gpipe']:g}** = $2(p-1)c$：只有灌满和排空各走一遍 $p-1$ 条链路，"
          f"中间的传输都被后面排队的 micro-batch 盖住了。1F1B 多了 **{extra['1f1b']:g}**：稳定阶段里 rank 0 做完一个前向就等"
          "下一个梯度回来，往返路上的每一次延迟都变成了空闲。1F1B 省显存的代价之一就是对延迟更敏感；"
          "实际系统靠异步发送、把通信和计算重叠来遮住它。", gpipe=extra["gpipe"], one_f_one_b=extra["1f1b"])))

# %% [markdown]
# ## 8. 调度浏览器
#
# 选一个调度，改 $p$、$m$、各操作耗时和延迟，看时间线（左）和激活（右）怎么变。列表里还有后面几章的调度（interleaved 取 $v=2$；zb-h1、zb-h2、zbv、dualpipe、dualpipev 把反向拆成 B 和 W），可以先看个样子。`backward` 是一个 micro-batch 在一个 stage 上的完整反向耗时，拆分 B、W 的调度各分一半。不满足某个调度要求的参数组合，图里会写出原因。

# %%
SCHEDULES = list(REGISTRY)


def schedule_explorer(fig, schedule, p, m, F, backward, comm):
    gantt_ax, mem_ax = fig.subplots(1, 2, width_ratios=[2.2, 1])
    params = {"v": 2} if "v" in REGISTRY[schedule].params else {}
    costs = Costs(f=F, b=backward / 2, w=backward / 2, comm=comm)   # split schedules: B and W get half each
    try:
        tl = simulate(build(schedule, p, m, **params), costs)
    except ValueError as err:   # a (p, m) this schedule does not allow: say why instead of drawing
        gantt_ax.text(0.02, 0.5, f"{schedule}, p={p}, m={m}:\n{err}", wrap=True, va="center", fontsize=10)
        gantt_ax.set_axis_off()
        mem_ax.set_axis_off()
        return
    plots.gantt(tl, ax=gantt_ax)
    plots.memory(tl, ax=mem_ax)


explore(schedule_explorer, figsize=(13, 4), schedule=SCHEDULES[1:2] + SCHEDULES[:1] + SCHEDULES[2:],
        p=(2, 8, 4), m=(1, 16, 8), F=(0.5, 2.0, 1.0, 0.25), backward=(0.5, 4.0, 2.0, 0.25), comm=(0.0, 1.0, 0.0, 0.05))

# %% [markdown]
# **任务：** 保持 widget 的默认值（$p=4$、$m=8$、F=1、backward=2、comm=0），逐个切换调度，找出 makespan 最短的那个，把名字填进下一格。

# %%
answer_fastest = None   # 例如 "1f1b"

# %%
def default_makespan(schedule):
    params = {"v": 2} if "v" in REGISTRY[schedule].params else {}
    return simulate(build(schedule, 4, 8, **params), Costs(f=1.0, b=1.0, w=1.0)).makespan


spans_by_schedule = {name: default_makespan(name) for name in SCHEDULES}
fastest = min(spans_by_schedule, key=spans_by_schedule.get)
md(reveal(answer_fastest, fastest, "各调度的 makespan：" + "，".join(f"{k} {v:g}" for k, v in spans_by_schedule.items())
          + "。后面几章逐个讲它们为什么更短、各自付出什么代价。"))

# %% [markdown]
# ## 怎么讲清楚
#
# - **plan** 是调度的中间表示：每个 rank 的操作顺序加上 stage 的放置。它可以打印、手写、解析、校验，像论文里的表格一样读。
# - **依赖**：$F$ 从前往后传，$B$ 从后往前传；$B_i$ 还要等本 stage 的 $F_i$。调度只定 rank 内的顺序，跨 rank 的等待都来自依赖。
# - **事件驱动模拟**：rank 空闲且依赖到齐就开始；每个操作一个完成事件，耗时可以是任意实数。队列空了还有没做完的，就是死锁，并且能说出谁在等谁。
# - **GPipe 与 1F1B**：bubble 相同；1F1B 的 stage $s$ 最多存 $\min(m, p-s)$ 份激活，GPipe 存 $m$ 份，所以 1F1B 是默认调度。
# - **不均匀的 stage**：最慢的 stage 决定节奏（下界 $m\cdot\max_s(F_s+B_s)$）；在 1F1B 里它越靠后，开头和结尾等得越久，放在最后最伤。
# - **延迟**：点对点延迟在 GPipe 里只付在两头，在 1F1B 的稳定阶段里每一轮都要付。
#
# ## 练习
#
# - `one-f-one-b-order`（★★☆）：用模拟器找出 1F1B 每个 stage 最少要几个 warm-up 前向，既不死锁、也不让 makespan 变长。
# - `event-simulator`（★★★）：实现事件驱动模拟器，包括死锁报告。
# - `peak-activations`（★☆☆）：从每个 rank 的操作序列算出它的峰值激活。
# - `heavy-stage-position`（★★☆）：先预测、再用模拟器验证慢的 stage 放在哪里 1F1B 最快，并推出它放在最后时的 makespan。
#
# ```bash
# python practice/judge.py start one-f-one-b-order
# python practice/judge.py start event-simulator
# python practice/judge.py start peak-activations
# python practice/judge.py start heavy-stage-position
# ```
