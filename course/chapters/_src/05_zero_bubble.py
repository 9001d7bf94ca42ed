# %% [markdown]
# # 第 5 章　零气泡：把反向拆成 B 和 W
#
# 1F1B 和交错调度都把"反向"当成一个整体。零气泡（Zero Bubble, Qi et al., 2023）注意到反向里有两件事：
# 对输入的梯度（上一张卡正等着它）和对权重的梯度（谁也不等它，只要在优化器更新之前算完）。
# 把后者拆出来、挪到原本空闲的地方，气泡就能被填上。本章先手算一个 Linear 的两种梯度，再看 ZB-H1、ZB-H2 的时间线和显存，
# 然后认真回答"零"到底指什么，最后在多进程上真跑 ZB-H1。
#
# ## 自测
#
# 1. 对 $Y = XW$，写出 $\partial L/\partial X$ 和 $\partial L/\partial W$。各自需要哪些张量？
# 2. 为什么 B（输入梯度）必须尽快算，而 W（权重梯度）可以延后？延后 W 的代价是什么？
# 3. ZB-H1 的激活峰值和 1F1B 比如何？ZB-H2 呢？
# 4. ZB-H2 每张卡都没有空闲，为什么一次迭代的 makespan 仍然大于 $m(F+B+W)$？
# 5. "post-validation"（事后校验）解决的是什么问题？没有它，ZB-H2 的优势还剩多少？
#
# <details><summary>参考答案（先自己答，再展开）</summary>
#
# 1. $\partial L/\partial X = \mathrm{d}Y\,W^\top$，只需要 $\mathrm{d}Y$ 和权重 $W$；$\partial L/\partial W = X^\top \mathrm{d}Y$，
#    需要 $\mathrm{d}Y$ 和前向时存下的输入 $X$（激活）。
# 2. 上一张卡的反向要等这张卡的 B 才能开始，B 在关键路径上；W 只被本卡的优化器用到。延后 W 意味着输入 $X$
#    （以及 $\mathrm{d}Y$）要一直留到 W 算完，激活释放得更晚。
# 3. ZB-H1 的峰值与 1F1B 相同，最多 $p$ 份——预热没有变长；只是 W 推迟后激活释放得晚，1F1B 里卡 $r$ 只到 $p-r$，
#    ZB-H1 里每张卡都会到 $p$。ZB-H2 在预热阶段多做前向来填满开头，峰值最多 $2p-1$ 份。
# 4. 各张卡的窗口是错开的：卡 $r$ 要等 $r$ 个前向才有活干，也就晚 $r$ 个前向结束；卡 0 早早做完，只能等最后一张卡。
#    "每张卡的窗口内没有空闲"不等于"所有卡在同一段时间里都在忙"。
# 5. 优化器步通常要全局信息（梯度范数裁剪、NaN/Inf 检查），这会在迭代之间插入一个同步点，下一轮的预热无法填进本轮的收尾。
#    事后校验让各卡先乐观地更新、之后再核对（出问题就回滚），去掉了这个同步点，多轮迭代首尾相接，稳定状态下每轮才是
#    $m(F+B+W)$。没有它，每轮都要付一次错开的开头和结尾。
#
# </details>

# %%
import matplotlib.pyplot as plt
import torch
from IPython.display import Markdown, display

from course import formulas, plots
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
# 两个式子透露了零气泡的全部动机：
#
# - **B = dY·Wᵀ** 只要 $\mathrm{d}Y$ 和权重，算完立刻发给上一张卡——它在关键路径上；
# - **W = Xᵀ·dY** 要用到前向存下的 $X$，但结果只有本卡的优化器会用，可以晚一点算；代价是 $X$ 要多存一会儿。
#
# (`torch.nn.Linear` 存的是 $W^\top$，公式里的 $W$ 换成 `weight.T` 即可。)
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

# %% [markdown]
# 这样写直观但不省：第二次 `autograd.grad` 会重新沿图走一遍、再算一次中间层的输入梯度。
# 正式实现（零气泡论文的代码、`torch.distributed.pipelining` 的 `stage_backward_weight`）在 B 时把每层的 $\mathrm{d}Y$
# 留下，W 时直接做 $X^\top \mathrm{d}Y$。本课程的 `course.live` 也是这样：B 一次对 stage 输入和每个 Linear 的输出求导并留下后者，
# W 时每个 Linear 只做一次小的乘法。记账上的结论不变：**B 之后激活还不能释放，要等 W**。
#
# ## 2. 计划里的 B 和 W
#
# 在本库的 `Plan` 里，只要出现 `W` 算子，`B` 就只表示输入梯度；没有 `W` 时 `B` 是完整反向。
# 下面比较三张计划：1F1B（完整反向）、ZB-H1、ZB-H2，代价取 $F = B = W$（零气泡论文的设定）。

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
md(f"- **1F1B**：卡 0 空闲 {tls['1f1b'].idle[0]:g} $=(p-1)(F+B+W)$，完整反向不可拆，灌满和排空都是空等。\n"
   f"- **ZB-H1**：卡 0 空闲降到 {tls['zb-h1'].idle[0]:g} $=(p-1)(F+B-W)$，makespan 从 {tls['1f1b'].makespan:g} 降到 "
   f"{tls['zb-h1'].makespan:g}；激活峰值的最大值 {max(tls['zb-h1'].peak_activations):g}，和 1F1B 的 "
   f"{max(tls['1f1b'].peak_activations):g} 一样，预热没有变长。不过 1F1B 的卡 $r$ 只到 $p-r$，ZB-H1 推迟了 W，"
   f"各卡的峰值是 {rounded(tls['zb-h1'].peak_activations)}：激活要等 W 做完才释放。\n"
   f"- **ZB-H2**：每张卡窗口内的空闲都是 {max(tls['zb-h2'].idle):g}，$(p-1)(F+B-2W)$ 在 $F=B=W$ 时正好为零；"
   f"代价是预热阶段多做前向，卡 0 的激活峰值到 {tls['zb-h2'].peak_activations[0]:g}（上限 $2p-1 = {2 * p - 1}$）。")

# %% [markdown]
# 读图时盯住卡 0：1F1B 的卡 0 在最后要等所有反向回流；ZB-H1 在这段时间里做攒下的 W；
# ZB-H2 在开头就多做几个前向，让后面每个空隙都有 W 可填。
#
# ## 3. "零"到底是什么意思
#
# "零气泡"这个词至少有三种读法，数字差别很大：
#
# 1. **每张卡自己的窗口**（从它第一个算子开始到最后一个算子结束）：`Timeline.idle` 就是这样算的，也是论文表格的口径。
# 2. **一次迭代**：所有卡从同一时刻开始、在最后一张卡结束时才算完成，错开的开头和结尾都算气泡——`bubble_ratio`。
# 3. **稳定状态**：很多次迭代首尾相接时，每次迭代平均多长。

# %%
busy = m * (F + B + Wt)
h2 = tls["zb-h2"]
windows = [(rs[0].start, rs[-1].end) for rs in h2.spans]
md(f"ZB-H2 在 $p={p}, m={m}$ 下：窗口内空闲 {max(h2.idle):g}（读法 1 是零）；一次迭代 makespan {h2.makespan:g}，"
   f"而每张卡只有 {busy:g} 的工作，气泡占比 {h2.bubble_ratio:.1%}（读法 2 不是零）。"
   f"差的 {h2.makespan - busy:g} $=(p-1)F$ 来自错开：各卡的窗口是 "
   + "，".join(f"卡 {r} [{a:g}, {b:g}]" for r, (a, b) in enumerate(windows))
   + f"——卡 $r$ 要等 $r$ 个前向才有活干，卡 0 做完自己的 {busy:g} 之后，只能等最后一张卡结束。")

# %% [markdown]
# 读法 3 要看多次迭代。迭代之间如果有一个同步点（优化器步之前做全局的梯度范数裁剪、NaN/Inf 检查），下一次迭代只能
# 等本次完全结束后再开始，每次都付一遍错开的开头和结尾。零气泡论文的**事后校验（post-validation）**让各卡先更新、
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
md(f"只有 ZB-H2 加上事后校验，周期才落到下界 {busy:g}（读法 3 的零）；"
   f"有同步点时它的周期是 {steady['zb-h2'][0]:g}，"
   f"{'和' if steady['zb-h2'][0] == steady['zb-h1'][0] else '对比'} ZB-H1 的 {steady['zb-h1'][0]:g}"
   f"{'一样' if steady['zb-h2'][0] == steady['zb-h1'][0] else ''}。"
   f"所以 ZB-H2 多出来的 $p-1$ 份激活，只有在去掉迭代间的同步之后才换得回时间。")
md("没有同步点时，卡 0 做完本轮的最后一个算子就能开始下一轮的第一个前向，周期就是卡 0 的窗口长度，"
   "即忙碌时间加上它窗口内的空闲："
   + "，".join(f"{name} 是 {busy:g} + {tls[name].idle[0]:g} = {busy + tls[name].idle[0]:g}" for name in plans)
   + "。读法 1 的零（窗口内无空闲）加上事后校验，才得到读法 3 的零。")
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
# ## 4. 自己动手：W 不等于 B 时
#
# 真实模型里 $F$、$B$、$W$ 并不相等（对一个 Linear，B 和 W 都是一次矩阵乘，和 F 差不多；注意力等部分则不然）。
# 先用一张表看 $W$ 变化时两种调度的空闲和论文公式，再拖动 `w`（相对 $F=B=1$）看空隙如何变化：$W$ 太小时没有足够的 W 去填空隙，
# $(p-1)(F+B-2W)$ 不再为零。

# %%
rows = ["| W | ZB-H1 max idle | (p-1)(F+B-W) | ZB-H2 max idle | (p-1)(F+B-2W) |", "|---|---|---|---|---|"]
fits = {}
for w in (0.25, 0.5, 1.0, 2.0):
    c = Costs(f=1, b=1, w=w)
    h1, h2 = (max(simulate(plans[name], c).idle) for name in ("zb-h1", "zb-h2"))
    paper_h1, paper_h2 = max(0.0, (p - 1) * (c.f + c.b - w)), max(0.0, (p - 1) * (c.f + c.b - 2 * w))
    fits[w] = (abs(h1 - paper_h1) < 1e-9, abs(h2 - paper_h2) < 1e-9)
    rows.append(f"| {w:g} | {h1:g} | {paper_h1:g} | {h2:g} | {paper_h2:g} |")
md(f"$p={p}, m={m}$，$F=B=1$：\n\n" + "\n".join(rows))
md("ZB-H2 的空闲在表中每一行都等于 $(p-1)(F+B-2W)$（截到 0）：" + ("是" if all(b for _, b in fits.values()) else "否")
   + f"。ZB-H1 与 $(p-1)(F+B-W)$ 相符的 W：{[w for w, (a, _) in fits.items() if a]}；不相符的：{[w for w, (a, _) in fits.items() if not a]}"
   "——W 比 F、B 还长时，ZB-H1 按固定顺序推迟的 W 与空隙对不上，空闲多于公式；"
   "所以 `formulas.predict` 只在 $W \\le \\min(F, B)$ 时给出 ZB-H1 的闭式解。")

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
# ## 5. 真跑 ZB-H1：梯度一致，测得的时间比 1F1B 短
#
# 同一个 ZB-H1 计划交给 `course.live`：B 求出 stage 输入的梯度立刻发给上一张卡，W 在计划排定的位置再算权重梯度。
# 两件事要验证：梯度逐个参数与单进程一致（拆分没有算错）；在模拟的设备时间下，测得的 makespan 比 1F1B 短，比例接近模拟。

# %%
from course.live import run_plan  # noqa: E402  (starts processes only when called)

live = {name: run_plan(build(name, p, m), costs, emulate=True) for name in ("1f1b", "zb-h1")}
for name, res in live.items():
    print(f"{name}: grad_ok={res.grad_ok} max_abs_err={res.max_abs_err:.1e} "
          f"measured={res.measured_makespan:.3f}s simulated={res.simulated_makespan:.3f}s")
ratio_measured = live["zb-h1"].measured_makespan / live["1f1b"].measured_makespan
ratio_sim = tls["zb-h1"].makespan / tls["1f1b"].makespan
md(f"两次运行的梯度都与单进程参照{'一致' if all(r.grad_ok for r in live.values()) else '**不一致**'}"
   f"（最大绝对误差 {max(r.max_abs_err for r in live.values()):.1e}）："
   f"拆开的 B 和 W 加起来就是完整的反向。ZB-H1 / 1F1B 的 makespan：测得 {ratio_measured:.2f}，模拟 {ratio_sim:.2f}"
   + ("，真跑复现了模拟预测的加速。" if abs(ratio_measured - ratio_sim) <= 0.1 else
      "：差得较多，说明这台机器上进程在抢 CPU，算子本身就超过了模拟的设备时间（emulate 只能补齐，不能压缩）。"))
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
# - 一个 Linear 的反向是两次矩阵乘：$\mathrm{d}X = \mathrm{d}Y\,W^\top$（B，上一张卡在等）和 $\mathrm{d}W = X^\top \mathrm{d}Y$
#   （W，没人等）。把 W 拆出来延后，就能用它填气泡；代价是激活要留到 W 之后。
# - ZB-H1 把 W 挪进排空阶段，激活峰值和 1F1B 一样是 $p$，每张卡的空闲从 $(p-1)(F+B+W)$ 降到 $(p-1)(F+B-W)$。
# - ZB-H2 多做预热前向，激活峰值最多 $2p-1$，窗口内空闲 $(p-1)(F+B-2W)$，$F=B=W$ 时为零。
# - "零"要说清口径：每张卡窗口内的空闲为零，不等于一次迭代没有气泡；只有用事后校验去掉迭代间的同步点，
#   稳定周期才落到 $m(F+B+W)$。
# - 拆分要验证：真跑 ZB-H1，梯度逐个参数与单进程对齐；在模拟的设备时间下，测得的加速与模拟预测对照。
#
# ## 练习
#
# - `linear-backward-split`：不用 autograd，手写 `torch.nn.Linear` 的 B 和 W（含 bias，输入可以有多个前导维度），
#   与 autograd 对齐。注意 torch 存的是 `weight` $= W^\top$，本章的公式要相应地转置。
# - `zb-h1-order`：写出 ZB-H1 每张卡的 F/B/W 顺序（卡 $r$ 最多让 $r$ 个 W 待做）；测试用模拟器检查 makespan 和激活峰值。
#
# ```bash
# python practice/judge.py start linear-backward-split
# python practice/judge.py start zb-h1-order
# ```
