# %% [markdown]
# # 第 5 章　零 bubble：把反向拆成 B 和 W
#
# 1F1B 和交错调度都把"反向"当成一个整体。Zero Bubble（Qi et al., 2023）注意到反向里有两件事：
# 对输入的梯度（上一个 rank 正等着它）和对权重的梯度（谁也不等它，只要在优化器更新之前算完）。
# 把后者拆出来、挪到原本空闲的地方，bubble 就能被填上。本章先手算一个 Linear 的两种梯度，再看 ZB-H1、ZB-H2 的时间线和显存，
# 然后认真回答"零"到底指什么，最后在多进程上真跑 ZB-H1。术语和记号见[术语表](glossary.md)。
#
# ## 自测
#
# 1. 对 $Y = XW$，写出 $\partial L/\partial X$ 和 $\partial L/\partial W$。各自需要哪些张量？
# 2. 为什么 B（输入梯度）必须尽快算，而 W（权重梯度）可以延后？延后 W 的代价是什么？
# 3. ZB-H1 的激活峰值和 1F1B 比如何？ZB-H2 呢？
# 4. ZB-H2 每个 rank 的窗口内都没有空闲，为什么一次迭代的 makespan 仍然大于 $m(F+B+W)$？
# 5. "post-validation"（事后校验）解决的是什么问题？没有它，ZB-H2 的优势还剩多少？
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
#    $m(F+B+W)$。没有它，每轮都要付一次错开的开头和结尾；B 比 W 长时（transformer 的常态），ZB-H2 即使有同步点也比 ZB-H1 快（第 3 节）。
#
# </details>

# %%
import matplotlib.pyplot as plt
import torch
from IPython.display import Markdown, display

from course import formulas, plots
from course.claims import claim, reveal
from course.costs import Costs
from course.schedules import build
from course.sim import simulate
from course.widgets import explore


def md(text: str) -> None:
    """Prose whose numbers come from this notebook's cells."""
    display(Markdown(text))


def rounded(xs):
    return [round(x, 3) for x in xs]


# %% [markdown]
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

# %%
torch.manual_seed(0)
n, d_in, d_out = 6, 5, 3
X = torch.randn(n, d_in, dtype=torch.float64, requires_grad=True)
W = torch.randn(d_in, d_out, dtype=torch.float64, requires_grad=True)
dY = torch.randn(n, d_out, dtype=torch.float64)          # what the next stage sends back

(X @ W).backward(dY)                                       # autograd: fills X.grad and W.grad
dX_hand = dY @ W.detach().T                                # B: input gradient, needs dY and W
dW_hand = X.detach().T @ dY                                # W: weight gradient, needs dY and the saved input X
err_dx = (dX_hand - X.grad).abs().max().item()
err_dw = (dW_hand - W.grad).abs().max().item()
md(f"dX: 形状 {tuple(dX_hand.shape)}，与 autograd 的最大差 {err_dx:.1e}；"
   f"dW: 形状 {tuple(dW_hand.shape)}，最大差 {err_dw:.1e}。")
assert err_dx < 1e-12 and err_dw < 1e-12

# %% [markdown]
# 两个式子透露了零 bubble 的全部动机：
#
# - **B = dY·Wᵀ** 只要 $\mathrm{d}Y$ 和权重，算完立刻发给上一个 rank：它在关键路径上；
# - **W = Xᵀ·dY** 要用到前向存下的 $X$，但结果只有本 rank 的优化器会用，可以晚一点算；代价是 $X$ 要多存一会儿。
#
# （`torch.nn.Linear` 存的是 $W^\top$，公式里的 $W$ 换成 `weight.T` 即可。）
#
# 对一整个 stage（几层叠起来）也一样：`torch.autograd.grad` 先只对 stage 的输入求导（B），留着计算图，
# 之后再对参数求导（W）。两步加起来和一次完整的 `backward()` 相同：

# %%
torch.manual_seed(1)
stage = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8)).double()
x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
dy = torch.randn(4, 8, dtype=torch.float64)

y = stage(x)
(dx,) = torch.autograd.grad(y, x, dy, retain_graph=True)      # B now: the previous stage is waiting for dx
dws = torch.autograd.grad(y, list(stage.parameters()), dy)     # W later: only this rank's optimizer needs it

stage.zero_grad()
x_ref = x.detach().requires_grad_()
stage(x_ref).backward(dy)                                     # the unsplit backward, for reference
err_split = max([(dx - x_ref.grad).abs().max().item()] +
                [(g - q.grad).abs().max().item() for g, q in zip(dws, stage.parameters())])
md(f"B 再加 W 与完整反向的最大差：{err_split:.1e}（{len(dws)} 个参数张量）。")
assert err_split < 1e-12

# %%
defaults = Costs()
md(f"`Costs()` 的默认值：F = {defaults.f:g}、b = {defaults.b:g}、w = {defaults.w:g}（完整反向 b + w = "
   f"{defaults.b + defaults.w:g}），`w_mem` = {defaults.w_mem:g}。"
   + claim(defaults.w_mem == 1.0, "默认 `w_mem` = 1 是最保守的记法：B 之后一份激活都不释放，全部留到 W。"
           "本章除第 2 节的预测外都用这个默认值。", otherwise=f"默认 `w_mem` 不是 1：B 之后还留 {defaults.w_mem:g} 份，到 W 才全部释放。",
           w_mem=defaults.w_mem))

# %% [markdown]
# ## 2. 计划里的 B 和 W
#
# 在本库的 `Plan` 里，只要出现 `W` 算子，`B` 就只表示输入梯度；没有 `W` 时 `B` 是完整反向。
# 下面比较三张计划：1F1B（完整反向）、ZB-H1、ZB-H2，代价取 $F = B = W$（Zero Bubble 论文的设定）。

# %% [markdown]
# **预测：** 1F1B 的 rank 0 在一次迭代里空闲 $(p-1)(F+B+W)$。ZB-H1 把 W 推迟到排空阶段，在 $p=4$、$m=8$、$F=B=W=1$ 时，
# rank 0 的窗口内还剩多少空闲？把数字写进下一格的 `guess_h1_idle`。

# %%
guess_h1_idle = None    # a number, e.g. 3

# %% [markdown]
# 这样写直观但不省：第二次 `autograd.grad` 会重新沿图走一遍、再算一次中间层的输入梯度。
# 正式实现（Zero Bubble 论文的代码、`torch.distributed.pipelining` 的 `stage_backward_weight`）在 B 时把每层的 $\mathrm{d}Y$
# 留下，W 时直接做 $X^\top \mathrm{d}Y$。本课程的 `course.live` 也是这样：B 一次对 stage 输入和每个 Linear 的输出求导并留下后者，
# W 时每个 Linear 只做一次小的乘法。
#
# **B 之后还要留多少激活，是一个建模假设。** Zero Bubble 论文分开记两个量：$M_B$，一个 micro-batch 在一个 stage 上
# B 要用到的全部激活；$M_W$，B 做完之后、W 做完之前还占着的那部分（每个 Linear 的输入 $X$ 和输出梯度 $\mathrm{d}Y$），
# $M_W < M_B$。本库用 `Costs.w_mem` $= M_W / M_B$ 表示：F 分配 1 份，B 释放 $1 - $ `w_mem`，W 释放剩下的 `w_mem`。
# 默认值从对象里读出来：

# %%
p, m = 4, 8
costs = Costs(f=1, b=1, w=1)
plans = {name: build(name, p, m) for name in ("1f1b", "zb-h1", "zb-h2")}
tls = {name: simulate(plan, costs) for name, plan in plans.items()}
for name, plan in plans.items():
    print(f"{name:6s} rank 0: {' '.join(plan.rank_tokens(0))}")
fig = plots.compare(list(tls.values()), memory_too=True)

# %%
F, B, Wt = costs.f, costs.b, costs.w
closed = {name: formulas.predict(name, p, m, costs).idle[0] for name in plans}   # the library's closed forms
rows = ["| schedule | makespan | idle per rank | closed form (rank 0) | peak activations per rank |", "|---|---|---|---|---|"]
for name, tl in tls.items():
    rows.append(f"| {name} | {tl.makespan:g} | {rounded(tl.idle)} | {closed[name]:g} | {rounded(tl.peak_activations)} |")
md(f"$p={p}, m={m}, F=B=W={F:g}$：\n\n" + "\n".join(rows))
idle0 = {name: tl.idle[0] for name, tl in tls.items()}
peaks = {name: tl.peak_activations for name, tl in tls.items()}
assert abs(idle0["1f1b"] - (p - 1) * (F + B + Wt)) < 1e-9 and abs(idle0["zb-h1"] - (p - 1) * (F + B - Wt)) < 1e-9
md(f"- **1F1B**：rank 0 空闲 {idle0['1f1b']:g} $=(p-1)(F+B+W)$，完整反向不可拆，灌满和排空都是空等。\n"
   f"- **ZB-H1**：rank 0 空闲降到 {idle0['zb-h1']:g} $=(p-1)(F+B-W)$，makespan 从 {tls['1f1b'].makespan:g} 降到 "
   f"{tls['zb-h1'].makespan:g}。"
   + claim(max(peaks["zb-h1"]) == max(peaks["1f1b"]),
           f"激活峰值的最大值 {max(peaks['zb-h1']):g}，和 1F1B 的 {max(peaks['1f1b']):g} 一样，预热没有变长。",
           zb_h1=peaks["zb-h1"], one_f_one_b=peaks["1f1b"])
   + f"不过 1F1B 的 rank $r$ 只到 $p-r$（{rounded(peaks['1f1b'])}），ZB-H1 推迟了 W，各 rank 的峰值是 "
   f"{rounded(peaks['zb-h1'])}：按默认的 `w_mem` = {costs.w_mem:g}，激活要等 W 做完才释放。\n"
   f"- **ZB-H2**：每个 rank 窗口内的最大空闲是 {max(tls['zb-h2'].idle):g}，"
   + claim(max(tls["zb-h2"].idle) < 1e-9 and F + B - 2 * Wt <= 1e-9,
           "$(p-1)(F+B-2W)$ 在 $F=B=W$ 时正好为零；", idle=tls["zb-h2"].idle)
   + f"代价是预热阶段多做前向，rank 0 的激活峰值到 {peaks['zb-h2'][0]:g}（上限 $2p-1 = {2 * p - 1}$）。")

# %%
md(reveal(guess_h1_idle, idle0["zb-h1"],
          f"ZB-H1 的 rank 0 在排空阶段用攒下的 W 填空隙，每一段空等少了一个 W：$(p-1)(F+B-W) = {idle0['zb-h1']:g}$，"
          f"1F1B 是 {idle0['1f1b']:g}。"))

# %% [markdown]
# **预测：** 如果一个待做的 W 只占着一半的激活（`w_mem` = 0.5，即 $M_W = M_B/2$），ZB-H1 各 rank 的激活峰值是多少？
# 写成一个列表，rank 0 在前。

# %%
guess_h1_peaks = None   # a list of p numbers, e.g. [4, 4, 4, 4]

# %%
half = Costs(f=1, b=1, w=1, w_mem=0.5)
peaks_half = simulate(plans["zb-h1"], half).peak_activations
closed_peaks = [(p - r) + r * half.w_mem for r in range(p)]
md(reveal(guess_h1_peaks, rounded(peaks_half),
          claim(all(abs(a - b) < 1e-9 for a, b in zip(peaks_half, closed_peaks)),
                f"rank $r$ 在稳定阶段同时有 $p-r$ 个 micro-batch 做完了 F 还没做 B（各占 1 份），外加 $r$ 个待做的 W"
                f"（各占 `w_mem` = {half.w_mem:g} 份）：峰值 $(p-r) + r\\cdot$`w_mem`，即 $(p-r)M_B + r\\,M_W$。"
                f"`w_mem` = 1 时每个 rank 都是 $p$，`w_mem` = 0 时退回 1F1B 的 $p-r$。",
                peaks=peaks_half, closed=closed_peaks)))

# %% [markdown]
# 读图时盯住 rank 0：1F1B 的 rank 0 在最后要等所有反向回流；ZB-H1 在这段时间里做攒下的 W；
# ZB-H2 在开头就多做几个前向，让后面每个空隙都有 W 可填。
#
# %% [markdown]
# ### 2.1 以字节计：B 和 W 各留下什么
#
# `w_mem` 不必拍脑袋。W 算的是每个 Linear 的 $\mathrm{d}W = X^\top \mathrm{d}Y$：它只要这个 Linear 的输入 $X$（F 时就存下了）和输出梯度 $\mathrm{d}Y$（B 算出来的）。softmax 的输出、LayerNorm 的输入、GeLU 的输入这些，B 用完就可以释放。`course.memory.layer_terms` 把一层为反向保存的张量逐项列出，`w_mem_share` 按上面的规则算出 $M_W / M_B$。下面是 GPT-3 175B 的一层（$s=2048$、$b=1$，先不并行，与 Zero Bubble 论文的记法一致）：

# %%
from course.memory import PRESETS, ActivationConfig, layer_activation_bytes, layer_terms, pipeline_memory, w_mem_share

GPT3 = PRESETS["gpt3-175b"]
plain_cfg = ActivationConfig(seq=2048, mbs=1)
sbh = plain_cfg.seq * plain_cfg.mbs * GPT3.hidden
terms = layer_terms(GPT3, plain_cfg.seq, plain_cfg.mbs)
md("| 为反向保存的张量 | 字节 | W 还要用吗 |\n|---|---|---|\n"
   + "\n".join(f"| {t.what} | {t.size / sbh:g} sbh | {'要（Linear 的输入）' if t.linear_input else '不要'} |"
               for t in terms))
m_b = layer_activation_bytes(GPT3, plain_cfg)
share = w_mem_share(GPT3, plain_cfg)
m_w = share * m_b
md(claim(round(m_b) == round(sbh * (34 + 5 * GPT3.heads * plain_cfg.seq / GPT3.hidden)) and round(m_w) == 32 * sbh,
         f"加起来 $M_B$ = {m_b / sbh:g} sbh = {m_b / 1e9:.2f} GB，正是 $sbh(34 + 5as/h)$；"
         f"W 要的是四个 Linear 的输入（共 14 sbh）加上它们的输出梯度（18 sbh），$M_W$ = {m_w / sbh:g} sbh = "
         f"{m_w / 1e9:.2f} GB，和 Zero Bubble 论文给的 $32bsh$ 一致。所以 `w_mem` = $M_W/M_B$ ≈ **{share:.2f}**："
         "注意力分数那一大块，B 做完就能放掉。", m_b=m_b, m_w=m_w))

# %% [markdown]
# 比例随设置而变：选择性重算本来就不存注意力分数，剩下的几乎都是 W 要的东西。

# %%
share_rows = []
for label, cfg in (("不并行、不重算", plain_cfg), ("TP=8 + SP、不重算", ActivationConfig(2048, 1, 8, True)),
                   ("TP=8 + SP、选择性重算", ActivationConfig(2048, 1, 8, True, "selective"))):
    b_bytes = layer_activation_bytes(GPT3, cfg)
    s_ = w_mem_share(GPT3, cfg)
    share_rows.append((label, b_bytes, s_))
md("| 设置 | $M_B$（每层） | $M_W$（每层） | `w_mem` |\n|---|---|---|---|\n"
   + "\n".join(f"| {label} | {b / 1e6:.0f} MB | {b * s_ / 1e6:.0f} MB | {s_:.2f} |" for label, b, s_ in share_rows))
md(claim(share_rows[2][2] > 0.9 > 0.3 > share_rows[1][2],
         f"不重算时 W 只占着 {share_rows[1][2]:.0%}，选择性重算时占着 {share_rows[2][2]:.0%}：推迟 W 在后一种情况下"
         "几乎不省显存。", shares=[r[2] for r in share_rows]))

# %% [markdown]
# 现在把真实的 `w_mem` 放进调度。GPT-3 175B 切成 $p=8$ 段、$m=32$、TP=8 + SP、不重算，比较 1F1B、ZB-H1 和 ZB-H2 每个 rank 的峰值（权重、梯度和 Adam 状态都算上）。ZB-H1 分两种：默认的 `w_mem` = 1（激活等到 W 才全部释放）和上面算出的真实比例：

# %%
GPU = 80e9
cfg_zb = ActivationConfig(2048, 1, 8, True, "none")
real_share = w_mem_share(GPT3, cfg_zb)
cases = {"1f1b": ("1f1b", 1.0), "zb-h1, w_mem=1": ("zb-h1", 1.0), f"zb-h1, w_mem={real_share:.2f}": ("zb-h1", real_share),
         f"zb-h2, w_mem={real_share:.2f}": ("zb-h2", real_share)}
zb_mem = {label: pipeline_memory(build(name, 8, 32), GPT3, cfg_zb, Costs(w_mem=wm)) for label, (name, wm) in cases.items()}
fig, axes = plt.subplots(1, len(zb_mem), figsize=(16, 3.4), sharey=True)
for ax, (label, pm) in zip(axes, zb_mem.items()):
    plots.memory_bars(pm.ranks, ax=ax, gpu_mem=GPU, title=label)
plt.show()
acts = {label: [r.activations for r in pm.ranks] for label, pm in zb_mem.items()}
peak = {label: max(pm.peak) for label, pm in zb_mem.items()}
h1_real, h2_real = list(acts)[2], list(acts)[3]
md("| 调度 | rank 0 激活 | rank 7 激活 | 最忙 rank 的总量 |\n|---|---|---|---|\n"
   + "\n".join(f"| {label} | {a[0] / 1e9:.1f} GB | {a[-1] / 1e9:.1f} GB | {peak[label] / 1e9:.1f} GB |"
               for label, a in acts.items()))
md(claim(acts[h1_real][0] == acts["1f1b"][0] and all(x > y for x, y in zip(acts[h1_real], acts[h1_real][1:-1]))
         and peak[h2_real] > GPU >= peak[h1_real],
         f"用真实的 `w_mem` 时，ZB-H1 的 rank 0 和 1F1B 一样存 {acts['1f1b'][0] / 1e9:.1f} GB 激活，往后的 rank 多存 "
         f"$r$ 个待做 W 的 $M_W$，逐级递减，即 $(p-r)M_B + r M_W$，而不是每个 rank 都存 $p$ 份；"
         f"ZB-H2 为了填满空隙多做预热前向，rank 0 的激活到 {acts[h2_real][0] / 1e9:.1f} GB，"
         f"最忙的 rank 一共要 {peak[h2_real] / 1e9:.1f} GB，超过 80 GB；ZB-H1 是 {peak[h1_real] / 1e9:.1f} GB，装得下。"
         "在这个形状上，ZB-H2 省下的 bubble 得拿重算或更多 TP 去换。",
         h1=acts[h1_real], h2=acts[h2_real], peaks=peak))

# %% [markdown]
# ## 3. "零"到底是什么意思
#
# "零 bubble"这个词至少有三种口径，数字差别很大：
#
# 1. **口径一，每个 rank 自己的窗口**（从它第一个算子开始到最后一个算子结束）：`Timeline.idle` 就是这样算的，也是论文表格的口径。
# 2. **口径二，一次迭代**：所有 rank 从同一时刻开始、在最后一个 rank 结束时才算完成，错开的开头和结尾都算 bubble，即 `bubble_ratio`。
# 3. **口径三，稳定状态**：很多次迭代首尾相接时，每次迭代平均多长。

# %%
busy = m * (F + B + Wt)
h2 = tls["zb-h2"]
windows = [(rs[0].start, rs[-1].end) for rs in h2.spans]
assert max(h2.idle) < 1e-9 and abs(h2.makespan - busy - (p - 1) * F) < 1e-9
md(f"ZB-H2 在 $p={p}, m={m}$ 下：窗口内空闲 {max(h2.idle):g}（口径一是零）；一次迭代 makespan {h2.makespan:g}，"
   f"而每个 rank 只有 {busy:g} 的工作，bubble 占比 {h2.bubble_ratio:.1%}（口径二不是零）。"
   f"差的 {h2.makespan - busy:g} $=(p-1)F$ 来自错开，各 rank 的窗口是 "
   + "，".join(f"rank {r} [{a:g}, {b:g}]" for r, (a, b) in enumerate(windows))
   + f"：rank $r$ 要等 $r$ 个前向才有活干，rank 0 做完自己的 {busy:g} 之后，只能等最后一个 rank 结束。")

# %% [markdown]
# 口径三要看多次迭代。迭代之间如果有一个同步点（优化器步之前做全局的梯度范数裁剪、NaN/Inf 检查），下一次迭代只能
# 等本次完全结束后再开始，每次都付一遍错开的开头和结尾。Zero Bubble 论文的**事后校验（post-validation）**让各 rank 先更新、
# 事后再核对全局条件（不满足就回滚这一步），同步点消失，第 $k+1$ 次迭代的预热可以填进第 $k$ 次的收尾。
# `course.iterations` 把 $K$ 次迭代接起来模拟，两种情形都能算：

# %%
from course.iterations import simulate_iterations  # noqa: E402

K = 4
steady = {}
for name in ("1f1b", "zb-h1", "zb-h2"):
    synced = simulate_iterations(plans[name], costs, iterations=K, sync=True)
    free = simulate_iterations(plans[name], costs, iterations=K, sync=False)
    steady[name] = (synced.period, free.period)
rows = ["| schedule | period with a barrier | period with post-validation | lower bound m(F+B+W) |", "|---|---|---|---|"]
rows += [f"| {name} | {a:g} | {b:g} | {busy:g} |" for name, (a, b) in steady.items()]
md(f"{K} 次迭代的稳定周期：\n\n" + "\n".join(rows))
at_bound = [name for name, (_, free) in steady.items() if abs(free - busy) < 1e-9]
same_with_barrier = abs(steady["zb-h2"][0] - steady["zb-h1"][0]) < 1e-9
md(claim(at_bound == ["zb-h2"], f"只有 ZB-H2 加上事后校验，周期才落到下界 {busy:g}（口径三的零）。", at_bound=at_bound)
   + f"有同步点时 ZB-H2 的周期是 {steady['zb-h2'][0]:g}，ZB-H1 是 {steady['zb-h1'][0]:g}："
   + claim(same_with_barrier, "在 $F=B=W$ 时两者一样，ZB-H2 多存的 $p-1$ 份激活只有去掉同步点才换得回时间。",
           otherwise="两者不同，见下面的预测。", h2=steady["zb-h2"][0], h1=steady["zb-h1"][0]))
md("没有同步点时，rank 0 做完本轮的最后一个算子就能开始下一轮的第一个前向，周期就是 rank 0 的窗口长度，"
   "即忙碌时间加上它窗口内的空闲："
   + "，".join(f"{name} 是 {busy:g} + {tls[name].idle[0]:g} = {busy + tls[name].idle[0]:g}" for name in plans)
   + "。口径一的零（窗口内无空闲）加上事后校验，才得到口径三的零。")
for name in plans:
    assert abs(steady[name][1] - (busy + tls[name].idle[0])) < 1e-9

# %% [markdown]
# 画出来更直观：同样几次 ZB-H2 迭代，上图每次迭代之间有同步点，下图用事后校验首尾相接，比较两张图的总长度。

# %%
K_show = 3
with_barrier = simulate_iterations(plans["zb-h2"], costs, iterations=K_show, sync=True)
post_validated = simulate_iterations(plans["zb-h2"], costs, iterations=K_show, sync=False)
fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 4), sharex=True)
plots.gantt(with_barrier.timeline, ax=top, labels=False,
            title=f"zb-h2, {K_show} iterations with a barrier: {with_barrier.timeline.makespan:g}")
plots.gantt(post_validated.timeline, ax=bottom, labels=False,
            title=f"zb-h2, {K_show} iterations with post-validation: {post_validated.timeline.makespan:g}")
bottom.set_xlim(0, with_barrier.timeline.makespan)
fig.tight_layout()

# %% [markdown]
# 上面的 $F=B=W$ 只是论文的示意设定。真实的 transformer 里 B 比 W 长：注意力分数 $QK^\top$、softmax 的梯度
# 只有输入梯度、没有权重梯度，一层的 B 约是 $24bsh^2 + 8bs^2h$ 次浮点运算，W 约是 $24bsh^2$。

# %% [markdown]
# **预测：** 有同步点（每次迭代都付错开的开头和结尾）、$F=1$、$B=2$、$W=1$ 时，ZB-H2 和 ZB-H1 谁的周期更短？
# 在 `guess_barrier` 里写 `"zb-h2"`、`"zb-h1"` 或 `"same"`。

# %%
guess_barrier = None    # "zb-h2", "zb-h1" or "same"

# %%
barrier_rows = ["| F, B, W | ZB-H1 period | ZB-H2 period | ZB-H2 shorter by |", "|---|---|---|---|"]
barrier = {}
for fbw in ((1, 1, 1), (1, 0.8, 1.2), (1, 1.2, 0.8), (1, 1.5, 1), (1, 2, 1), (1, 1, 0.5)):
    c = Costs(*fbw)
    h1, h2 = (simulate_iterations(plans[name], c, iterations=K, sync=True).period for name in ("zb-h1", "zb-h2"))
    barrier[fbw] = (h1, h2)
    barrier_rows.append(f"| {', '.join(f'{x:g}' for x in fbw)} | {h1:g} | {h2:g} | {h1 - h2:.3g} |")
md(f"$p={p}, m={m}$，{K} 次迭代，有同步点：\n\n" + "\n".join(barrier_rows))
b_gt_w = {fbw: fbw[1] > fbw[2] for fbw in barrier}
wins = {fbw: h1 - h2 > 1e-9 for fbw, (h1, h2) in barrier.items()}
extra = {fbw: (p - 1) * max(0.0, fbw[1] - fbw[2]) for fbw in barrier}
never_worse = all(abs(h1 - h2 - extra[fbw]) < 1e-9 for fbw, (h1, h2) in barrier.items())
answer_barrier = {(True, False): "zb-h2", (False, True): "zb-h1"}.get(
    (barrier[(1, 2, 1)][1] < barrier[(1, 2, 1)][0] - 1e-9, barrier[(1, 2, 1)][0] < barrier[(1, 2, 1)][1] - 1e-9), "same")
md(reveal(guess_barrier, answer_barrier,
          claim(never_worse and wins == b_gt_w,
                "表里每一行，ZB-H2 都不比 ZB-H1 慢；它严格更快的行恰好是 $B > W$ 的行，ZB-H1 多付的正好是 "
                "$(p-1)\\max(0, B-W)$：排空阶段每一段反向回流要等一个 B，ZB-H1 攒下的 W 比 B 短，填不满。所以\"ZB-H2 只有去掉同步点才划算\"只在 $W \\ge B$ 时成立；"
                "$B > W$（transformer 的常态）时，它多存的激活即使有同步点也换得回时间。",
                wins=wins, b_gt_w=b_gt_w, barrier=barrier)))

# %% [markdown]
# ## 4. 自己动手：F、B、W 不相等时
#
# 真实模型里 $F$、$B$、$W$ 并不相等（对一个 Linear，B 和 W 都是一次矩阵乘，和 F 差不多；注意力等部分则不然）。
# 论文给 ZB-H2 的空闲是 $(p-1)(F+B-2W)$，截到 0。它成立有条件：

# %% [markdown]
# **预测：** $F=0.5$、$B=1.2$、$W=1$ 时公式给出 $\max(0, 3\times(-0.3)) = 0$。模拟的 ZB-H2 rank 0 窗口内空闲是多少？

# %%
guess_h2_idle = None    # a number

# %%
rows = ["| F, B, W | ZB-H1 max idle | (p-1)(F+B-W) | ZB-H2 rank-0 idle | (p-1)(F+B-2W), clipped | (p-1)(B-F) |",
        "|---|---|---|---|---|---|"]
fits = {}
for fbw in ((1, 1, 0.25), (1, 1, 0.5), (1, 1, 1.0), (1, 1, 2.0), (1, 1.5, 1), (1, 2, 1), (0.5, 1.2, 1), (1, 0.5, 1)):
    f_, b_, w_ = fbw
    c = Costs(*fbw)
    h1, h2 = max(simulate(plans["zb-h1"], c).idle), simulate(plans["zb-h2"], c).idle[0]
    paper_h1, paper_h2 = max(0.0, (p - 1) * (f_ + b_ - w_)), max(0.0, (p - 1) * (f_ + b_ - 2 * w_))
    fits[fbw] = {"h1": abs(h1 - paper_h1) < 1e-9, "h2": abs(h2 - paper_h2) < 1e-9,
                 "h2_general": abs(h2 - max(paper_h2, (p - 1) * (b_ - f_))) < 1e-9}
    rows.append(f"| {f_:g}, {b_:g}, {w_:g} | {h1:.3g} | {paper_h1:.3g} | {h2:.3g} | {paper_h2:.3g} | {(p - 1) * (b_ - f_):.3g} |")
md(f"$p={p}, m={m}$：\n\n" + "\n".join(rows))
h2_idle_case = simulate(plans["zb-h2"], Costs(f=0.5, b=1.2, w=1)).idle[0]

# %%
formula_h2_holds = [fbw for fbw, ok in fits.items() if ok["h2"]]
formula_h2_fails = [fbw for fbw, ok in fits.items() if not ok["h2"]]
h1_fails = [fbw for fbw, ok in fits.items() if not ok["h1"]]
md(reveal(guess_h2_idle, round(h2_idle_case, 6),
          claim(all(ok["h2_general"] for ok in fits.values()) and bool(formula_h2_fails)
                and all((fbw[1] > fbw[0] and fbw[2] > fbw[0]) == (fbw in formula_h2_fails) for fbw in fits),
                f"ZB-H2 的公式 $(p-1)(F+B-2W)$ 在 {len(formula_h2_holds)} 行成立，在 {formula_h2_fails} 不成立，"
                "不成立的恰好是 $B > F$ 且 $W > F$ 的行。原因在 rank 0 的稳定段：下游的 B 比本 rank 的 F 长时，"
                "每一段要等 $B-F$，W 填不进这种等待。表里每一行都符合 $(p-1)\\max(0,\\ F+B-2W,\\ B-F)$，"
                "所以论文的公式是 rank 0 的空闲，条件是 $B \\le F$ 或 $W \\le F$。",
                fits=fits))
   + claim(bool(h1_fails) and all(fbw[2] > min(fbw[0], fbw[1]) for fbw in h1_fails),
           f" ZB-H1 与 $(p-1)(F+B-W)$ 不相符的行 {h1_fails} 都有 $W > \\min(F, B)$：ZB-H1 按固定顺序推迟的 W 与空隙"
           "对不上，空闲多于公式，所以 `formulas.predict` 只在 $W \\le \\min(F, B)$ 时给出 ZB-H1 的闭式解。",
           otherwise=" ZB-H1 在表中每一行都与 $(p-1)(F+B-W)$ 相符。", h1_fails=h1_fails))

# %% [markdown]
# 再拖动下面的 `w`（相对 $F=B=1$）看空隙如何变化：$W$ 太小时没有足够的 W 去填空隙。

# %%
def zero_bubble_explorer(fig, schedule, p, w):
    tl = simulate(build(schedule, p, 2 * p), Costs(f=1, b=1, w=w))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    plots.gantt(tl, ax=left, labels=False,
                title=f"{schedule}, p={p}, m={2 * p}, W={w:.2f}: makespan {tl.makespan:.4g}, "
                      f"max idle {max(tl.idle):.3g}")
    plots.memory(tl, ax=right)


explorer = explore(zero_bubble_explorer, figsize=(12, 3.8), schedule=["zb-h1", "zb-h2", "1f1b"], p=(2, 6, 4),
                   w=(0.25, 2.0, 1.0, 0.25))

# %% [markdown]
# **任务：** 在浏览器里选 `zb-h2`、$p=4$，找出让最大空闲（标题里的 max idle）变成 0 的最小 `w`，写进 `answer_w`。

# %%
answer_w = None         # the smallest w on the slider with max idle 0 (zb-h2, p=4)

# %%
slider_ws = [0.25 * k for k in range(1, 9)]
zero_at = min(w for w in slider_ws if max(simulate(build("zb-h2", 4, 8), Costs(f=1, b=1, w=w)).idle) < 1e-9)
md(reveal(answer_w, zero_at, f"空闲是 $(p-1)\\max(0, F+B-2W, B-F)$，$F=B=1$ 时在 $W \\ge (F+B)/2 = {zero_at:g}$ 处变成 0。"))

# %% [markdown]
# ## 5. 真跑 ZB-H1：梯度一致，测得的时间与模拟对照
#
# 同一个 ZB-H1 计划交给 `course.live`：B 求出 stage 输入的梯度立刻发给上一个 rank，W 在计划排定的位置再算权重梯度。
# 两件事要验证：梯度逐个参数与单进程一致（拆分没有算错）；在模拟的设备时间下，测得的 makespan 比 1F1B 短，比例接近模拟。

# %%
import os  # noqa: E402

from course.live import run_plan  # noqa: E402  (starts processes only when called)

live = {name: run_plan(build(name, p, m), costs, emulate=True) for name in ("1f1b", "zb-h1")}
for name, res in live.items():
    print(f"{name}: grad_ok={res.grad_ok} max_abs_err={res.max_abs_err:.1e} "
          f"measured={res.measured_makespan:.3f}s simulated={res.simulated_makespan:.3f}s")
ratio_measured = live["zb-h1"].measured_makespan / live["1f1b"].measured_makespan
ratio_sim = tls["zb-h1"].makespan / tls["1f1b"].makespan
grads_ok = all(r.grad_ok for r in live.values())
md(claim(grads_ok, "两次运行的梯度都与单进程参照一致", errors=[r.max_abs_err for r in live.values()])
   + f"（最大绝对误差 {max(r.max_abs_err for r in live.values()):.1e}）：拆开的 B 和 W 加起来就是完整的反向。"
   f"ZB-H1 / 1F1B 的 makespan：测得 {ratio_measured:.2f}，模拟 {ratio_sim:.2f}。"
   + claim(ratio_measured < 1 and abs(ratio_measured - ratio_sim) <= 0.1,
           "测得的比值接近模拟：真跑也更快，差距来自进程调度和通信，模拟器没有计入。",
           otherwise=("测得的比值离模拟较远：这台机器上进程在抢 CPU（本机 "
                      f"{os.cpu_count()} 个逻辑核，{p} 个 rank），算子本身就超过了模拟的设备时间（emulate 只能补齐，不能压缩）。")))
fig = plots.compare([live["1f1b"].timeline, live["zb-h1"].timeline], titles=["1f1b measured", "zb-h1 measured"])

# %% [markdown]
# ## 6. 调度是搜出来的：给定代价和显存上限，找最短的计划
#
# ZB-H1、ZB-H2 是论文里手画的示意；Zero Bubble 论文真正交给工程师的是一个**自动调度器**：量出 $F$、$B$、$W$、
# 通信时间和每张卡的显存上限，由程序排出计划。`course.search` 做同一件事，而且回答两个问题：找到的计划多长，
# 以及**离最优还有多远**。
#
# - 启发式（heuristic）：list scheduling，空闲的卡优先做已就绪的 B，显存允许时做 F，显存不够或有空隙时做 W；
#   几个变体（预热多少个前向、F 会不会推迟快要到的 B、W 只填放得下的空隙还是见缝就插）取最好的，再在关键路径上
#   做局部交换；每个留下的计划都由课程的模拟器重新算一遍。它附带一个**证明出来的下界**（lower bound）：
#   任何计划都不可能比它短（每张卡最早的开工时刻 + 它的全部工作，等等，见 `course.search.lower_bound`）。
# - 精确方法（exact）：把问题交给 OR-Tools 的 CP-SAT：每个 op 一个 interval，每张卡 no-overlap，
#   显存用 reservoir constraint，用启发式的计划做 warm start。求解器要么证明最优，要么在时限内给出最好的计划和它的下界。
#
# 显存上限的单位和 `peak_activations` 一样：一个 micro-batch 在这张卡的 stage 上的激活。F 分配 1 份，
# B 释放 $1 - w_\text{mem}$，W 释放剩下的 $w_\text{mem}$。

# %%
from course.claims import claim  # noqa: E402
from course.search import search  # noqa: E402

p_s, m_s = 4, 8
costs_s = Costs(f=5, b=6, w=4, comm=1, w_mem=0.5)
cap_s = p_s                                  # 1F1B's activations
heur = search(p_s, m_s, costs_s, cap_s)
ex = search(p_s, m_s, costs_s, cap_s, exact_method=True, time_limit=20)
print(heur.plan.format())
print(f"heuristic: makespan {heur.makespan:g}, its lower bound {heur.lower_bound:g}, {heur.seconds:.2f} s")
print(f"exact:     makespan {ex.makespan:g}, lower bound {ex.lower_bound:g}, optimal={ex.optimal}, {ex.seconds:.2f} s")
md(claim(ex.optimal, f"CP-SAT 证明了 {ex.makespan:g} 就是最优：在每卡最多 {cap_s} 份激活的约束下，没有任何计划能更短。",
         otherwise=f"CP-SAT 在时限内没能证明最优：最好的计划 {ex.makespan:g}，下界 {ex.lower_bound:g}"
                   f"（差 {ex.gap:.1%}）。",
         makespan=ex.makespan, bound=ex.lower_bound)
   + " " + claim(heur.makespan <= ex.makespan + 1e-9,
                 f"启发式只用了 {heur.seconds * 1000:.0f} ms 就找到了同样长的计划 {heur.makespan:g}；"
                 f"但它自己的下界只有 {heur.lower_bound:g}，"
                 f"光靠它只能说\"离最优不超过 {heur.gap:.1%}\"，证明最优要靠求解器。",
                 otherwise=f"启发式的计划是 {heur.makespan:g}，比最优 {ex.makespan:g} 长 "
                           f"{heur.makespan / ex.makespan - 1:.1%}：求解器从它出发，又找到了更短的。",
                 heuristic=heur.makespan, exact=ex.makespan))

# %% [markdown]
# 自己调：固定 $p=4$、$m=8$、$F=1$、$w_\text{mem}=0.5$，拖动 `b`、`w` 和显存上限 `cap`，看搜到的计划、它的 makespan、
# 下界、是否被证明最优。勾上 `exact` 让 CP-SAT（限时 3 秒）来证明。上限越紧，前向越早被 B 和 W "卡住"。

# %%
def search_explorer(fig, b, w, cap, exact):
    c = Costs(f=1, b=b, w=w, w_mem=0.5)
    res = search(4, 8, c, cap, exact_method=exact, time_limit=3 if exact else None)
    tl = simulate(res.plan, c)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    verdict = "proven optimal" if res.optimal else f"gap <= {res.gap:.1%}"
    plots.gantt(tl, ax=left, labels=False,
                title=f"{res.method}: makespan {res.makespan:.4g}, bound {res.lower_bound:.4g} ({verdict})")
    plots.memory(tl, ax=right, title=f"activations (cap {cap:g})")
    right.axhline(cap, color="red", linestyle="--", linewidth=1)


explore(search_explorer, figsize=(12, 3.8), b=(0.5, 3.0, 1.0, 0.25), w=(0.25, 2.0, 1.0, 0.25),
        cap=(1.0, 8.0, 4.0, 0.5), exact=False)

# %% [markdown]
# **任务：** 保持 `b = 1`、`w = 1`，把 `cap` 从 8 往下拖。显存上限大到一定程度以后，再多给显存计划也不会变短。
# 找出让 makespan 比 `cap = 8` 时更长的**最大**的 `cap`（滑块上 0.5 一格），写进 `answer_cap`。

# %%
answer_cap = None       # the largest cap on the slider whose searched makespan exceeds the one at cap 8

# %%
slider_caps = [1.0 + 0.5 * k for k in range(15)]
by_cap = {c: search(4, 8, Costs(f=1, b=1, w=1, w_mem=0.5), c).makespan for c in slider_caps}
roomy = by_cap[8.0]
tight = max(c for c in slider_caps if by_cap[c] > roomy + 1e-9)
md(reveal(answer_cap, tight, claim(all(abs(by_cap[c] - roomy) < 1e-9 for c in slider_caps if c > tight),
          f"上限 {tight:g} 时计划还要更长；从 {tight + 0.5:g} 份起，搜到的 makespan 就是显存充裕时的 {roomy:g}："
          "多出来的显存已经没有可以换的时间了。", by_cap=by_cap)))

# %% [markdown]
# ### 同样的显存，谁赢？
#
# 把手画的调度和搜索放在**同样的显存**下比：ZB-H1 用 $p$ 份激活，ZB-H2 用 $2p-1$ 份，V-Half（V 形放置，每卡两个 chunk）
# 更少。对每个调度，先用模拟器量出它的峰值激活，再让搜索在这个上限下找最短的计划（搜索只在"每卡一个 stage"的计划里找）。
# $F=W=1$，$B$ 从小于 $W$ 变到大于 $W$。

# %%
p_c, m_c = 4, 8
table = ["| B | ZB-H1 (p) | search @ p | ZB-H2 (2p-1) | search @ 2p-1 | V-Half (peak) | search @ that peak | zbv (p) |",
         "|---|---|---|---|---|---|---|---|"]
cmp_rows = {}
for b in (0.5, 1.0, 1.5, 2.0, 3.0):
    c = Costs(f=1, b=b, w=1, w_mem=0.5)
    got = {}
    for name in ("zb-h1", "zb-h2", "v-half", "zbv"):
        tl = simulate(build(name, p_c, m_c), c)
        got[name] = (tl.makespan, max(tl.peak_activations))
    at = {k: search(p_c, m_c, c, got[k][1]) for k in ("zb-h1", "zb-h2", "v-half")}
    cmp_rows[b] = (got, at)
    star = {k: "" if at[k].optimal else " (not proven)" for k in at}
    table.append(f"| {b:g} | {got['zb-h1'][0]:g} | {at['zb-h1'].makespan:g}{star['zb-h1']} | {got['zb-h2'][0]:g} | "
                 f"{at['zb-h2'].makespan:g}{star['zb-h2']} | {got['v-half'][0]:g} ({got['v-half'][1]:g}) | "
                 f"{at['v-half'].makespan:g}{star['v-half']} | {got['zbv'][0]:g} |")
md(f"$p={p_c}, m={m_c}$，$F=W=1$，makespan（括号里是 V-Half 的峰值激活）：\n\n" + "\n".join(table))

never_worse = all(at[k].makespan <= got[k][0] + 1e-9 for got, at in cmp_rows.values() for k in ("zb-h1", "zb-h2"))
small_b = [b for b in cmp_rows if b <= 1]
large_b = [b for b in cmp_rows if b > 1]
proven = all(at[k].optimal for _, at in cmp_rows.values() for k in ("zb-h1", "zb-h2"))
extra_memory_useless = proven and all(abs(cmp_rows[b][1]["zb-h2"].makespan - cmp_rows[b][1]["zb-h1"].makespan) < 1e-9
                           for b in small_b)
extra_memory_pays = all(cmp_rows[b][1]["zb-h2"].makespan < cmp_rows[b][1]["zb-h1"].makespan - 1e-9 for b in large_b)
v_wins = proven and all(got["v-half"][0] < at["v-half"].makespan and got["zbv"][0] < at["zb-h1"].makespan
                       for got, at in cmp_rows.values())
md(claim(never_worse, "每一行里，搜索在 ZB-H1、ZB-H2 各自的显存下都不比它们长：手画的调度只是搜索空间里的一个点。",
         rows=cmp_rows)
   + "\n\n" + claim(extra_memory_useless and extra_memory_pays,
                    f"$B \\le W$ 时（B = {small_b}），$2p-1$ 份显存什么也买不到：上限 $p$ 下的最优计划已经一样短，ZB-H1 就够了。"
                    f"$B > W$ 时（B = {large_b}），关键路径上是一串 B，W 填不满 B 留下的空隙，预热时多做几个前向才有用："
                    "赢家换成了 ZB-H2 那样的计划。同一个问题，代价一变，最好的调度就变了——所以要搜，而不是背。",
                    small=small_b, large=large_b)
   + "\n\n" + claim(v_wins,
                    "但换了放置方式（placement）的 V 形调度在同样显存下更短：zbv 在 $p$ 份显存下胜过每卡一个 stage 时"
                    "证明出来的最优，V-Half 在它自己的峰值下也胜过搜索找到的最好计划。搜索只能在它的搜索空间里证明最优；"
                    "空间本身（放置方式、chunk 数）也是设计的一部分。",
                    rows=cmp_rows))

# %% [markdown]
# ## 怎么讲清楚
#
# - 一个 Linear 的反向是两次矩阵乘：$\mathrm{d}X = \mathrm{d}Y\,W^\top$（B，上一个 rank 在等）和 $\mathrm{d}W = X^\top \mathrm{d}Y$
#   （W，没人等）。把 W 拆出来延后，就能用它填 bubble；代价是一部分激活（$M_W$）要留到 W 之后，本库用 `Costs.w_mem` 表示。
# - ZB-H1 把 W 挪进排空阶段，激活峰值的最大值和 1F1B 一样是 $p$（rank $r$ 是 $(p-r)M_B + r\,M_W$），
#   rank 0 的空闲从 $(p-1)(F+B+W)$ 降到 $(p-1)(F+B-W)$（$W \le \min(F, B)$ 时）。
# - ZB-H2 多做预热前向，激活峰值最多 $2p-1$；rank 0 窗口内空闲是 $(p-1)\max(0, F+B-2W, B-F)$，
#   论文的 $(p-1)(F+B-2W)$ 要求 $B \le F$ 或 $W \le F$，$F=B=W$ 时为零。
# - "零"要说清口径：每个 rank 窗口内的空闲为零，不等于一次迭代没有 bubble；只有用事后校验去掉迭代间的同步点，
#   稳定周期才落到 $m(F+B+W)$。
# - 有同步点时 ZB-H2 也不比 ZB-H1 慢，$B > W$ 时严格更快：多存的激活不是只有去掉同步点才换得回时间。
# - 拆分要验证：真跑 ZB-H1，梯度逐个参数与单进程对齐；在模拟的设备时间下，测得的加速与模拟预测对照。
#
# ## 练习
#
# - `linear-backward-split`（★★☆）：不用 autograd，手写 `torch.nn.Linear` 的 B 和 W（含 bias，输入可以有多个前导维度），
#   与 autograd 对齐。
# - `zb-h1-order`（★★★）：设计一个顺序，激活峰值不超过 $p$、makespan 达到 $m(F+B+W)+(p-1)(F+B-W)$；测试在随机的
#   F、B、W 上模拟检查，不比较某一个固定答案。
# - `zb-h2-order`（★★★）：设计一个峰值不超过 $2p-1$、每个 rank 窗口内没有空闲的顺序。
# - `schedule-under-memory-cap`（★★★）：写一个调度器，任何时刻每张卡的激活不超过上限，makespan 在 `course.search`
#   的 1.15 倍以内。
#
# ```bash
# python practice/judge.py start linear-backward-split
# python practice/judge.py start zb-h1-order
# python practice/judge.py start zb-h2-order
# python practice/judge.py start schedule-under-memory-cap
# ```
