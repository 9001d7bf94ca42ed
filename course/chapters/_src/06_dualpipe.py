# %% [markdown]
# # 第 6 章　V 形与双向：ZB-V、DualPipe、DualPipeV
#
# 上一章的 ZB-H2 用 $2p-1$ 份激活换来了"窗口内零空闲"。能不能只用 1F1B 的显存就做到？ZB-V 的回答是换一种放置方式：
# 把模型切成 $2p$ 段、按 V 形摆在 rank 上。DeepSeek-V3 的 DualPipe 走得更远：micro-batch 从流水线两端同时进入，
# 一个前向和另一个 micro-batch 的反向配成一对重叠执行，让专家并行的 all-to-all 藏在计算后面；DualPipeV 再把 DualPipe 折成 V 形，
# 省掉第二份参数。本章用模拟器画出这三种调度，并把 DeepSeek 公开的"bubble / 参数 / 激活"表格逐项复现——
# 先写清楚表格的假设，再指出模拟和表格不一致的地方和原因。F&B 的重叠系数也不凭空给：第 3 节从一对 F&B 在计算流和通信流上的排布推出来。
# 术语见[术语表](glossary.md)。
#
# ## 自测
#
# 1. ZB-V 的 "V" 指什么？rank $r$ 持有哪两段？为什么最后一个 rank 不用把激活发出去就能接着算？
# 2. DualPipe 为什么每个 rank 要存两份参数？DualPipeV 是怎样省掉一份的？
# 3. DualPipe 的 F&B 重叠的是哪两件事？单向的 1F1B 在稳定阶段也是一前一后交替，能不能同样配对？"双向"到底换来了什么？
# 4. DeepSeek 表格里 DualPipe 的激活是 $PP+1$，它的单位是什么？和 1F1B 的 $PP$ 怎么比？
# 5. 表格的bubble $(PP/2-1)(F\&B+B-3W)$ 在什么条件下和本库的模拟一致？不一致时谁的bubble更小，为什么？
#
# <details><summary>参考答案（先自己答，再展开）</summary>
#
# 1. 模型切成 $2p$ 个 chunk，rank $r$ 持有第 $r$ 和第 $2p-1-r$ 个：前向从 rank 0 走到 rank $p-1$，再从 rank $p-1$ 走回 rank 0，
#    像字母 V。rank $p-1$ 同时持有第 $p-1$、$p$ 个 chunk，前一个的输出就是后一个的输入，在本 rank 上直接接着算；
#    最后一个 chunk 在 rank 0 上，反向也从 rank 0 开始。
# 2. DualPipe 有两条方向相反的路线：一半 micro-batch 从 rank 0 进入、走模型副本 A，另一半从 rank $p-1$ 进入、走副本 B，
#    rank $r$ 持有 A 的第 $r$ 段和 B 的第 $p-1-r$ 段，所以是 1F1B 的两倍参数（两份副本的梯度要再相加）。
#    DualPipeV 只有一条路线，把 $2p$ 个 chunk 按 V 形折起来，每个 rank 两段、每段半个 stage，参数和 1F1B 一样多。
# 3. 同一个 rank 上，一个 micro-batch 的前向 chunk 和另一个 micro-batch 的反向 chunk。两者的计算和通信交错排布，
#    一个的通信（all-to-all、点对点）藏在另一个的计算后面。配对本身不需要双向：1F1B 的稳定段里每个 rank 本来就交替做
#    两个不同 micro-batch 的 F 和 B，只路线一条的 DualPipeV 也在配对。单向配对的代价在依赖上：一对的 F 和 B 的输出要发给
#    相邻的两个方向，配成对后每一棒都要等整对做完，预热得加深一倍（激活也多一倍）才不拖慢（第 3 节）。双向（或 V 形折返）
#    让一对里 F 和 B 的数据流向同一个邻居，在 1F1B 量级的显存下就能配对，并把灌满和排空减半：公式里的 $PP/2$。
# 4. 单位是"一个 micro-batch 在一个 stage（chunk）上的激活"。DualPipe 的 stage 与 1F1B 一样大，峰值 $PP+1$ 只比 1F1B 多一份；
#    DualPipeV 的 chunk 只有半个 stage，$PP = 2p$ 个 chunk 的 $PP+1$ 折合 $p + 1/2$ 份 1F1B 单位。
# 5. 在 $W = 0$ 且 $F = B$ 时完全一致。$W > 0$ 时模拟的 bubble 更小：本库的 B 一结束就把 $\mathrm{d}X$ 发出去，W 之后再做。
#    把 F&B 里的反向当成整块（$\mathrm{d}W$ 算完才放出 $\mathrm{d}X$）重新计时，$F=B=W$ 时正好得到公式的值；
#    DeepSeek 代码里所有没推迟 W 的反向都是整块，按这个规则计时 bubble 比公式还大（第 5 节）。
#
# </details>

# %%
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
# ## 1. ZB-V：只用 1F1B 的显存做到零空闲
#
# 先看放置。`placement[r]` 是 rank $r$ 持有的 chunk，`routes[0]` 是一个 micro-batch 前向经过的 chunk 顺序：

# %%
p, m = 4, 8
costs = Costs(f=1, b=1, w=1)          # the zero-bubble setting F = B = W (one rank's share)
zbv = build("zbv", p, m)
owner = zbv.rank_of_stage()
print("placement:", zbv.placement)
print("forward path over ranks:", " -> ".join(str(owner[s]) for s in zbv.routes[0]))
path = [owner[s] for s in zbv.routes[0]]
v_shape = path == list(range(p)) + list(range(p - 1, -1, -1))
md(claim(v_shape, f"一个 micro-batch 经过 {zbv.chunks} 个 chunk，rank 序列先升后降（V 形）；rank {p - 1} 连续算两个 chunk，中间不需要点对点传输。",
         path=path)
   + f"每个 chunk 是半个 stage，代价取 $F=B=W={costs.f:g}$ 时一个 chunk 的 F、B、W 各是 {costs.f / 2:g}。")

# %%
tl_zbv = simulate(zbv, costs)
tl_h1 = simulate(build("zb-h1", p, m), costs)
tl_h2 = simulate(build("zb-h2", p, m), costs)
fig = plots.compare([tl_h1, tl_zbv], memory_too=True)
bound = formulas.predict("zbv", p, m, costs).makespan
assert abs(tl_zbv.makespan - bound) < 1e-9 and max(tl_zbv.idle) < 1e-9
md(f"$p={p}, m={m}$：ZB-V 的 makespan **{tl_zbv.makespan:g}**，每个 rank 窗口内的空闲 {rounded(tl_zbv.idle)}，"
   f"激活峰值 {rounded(tl_zbv.peak_activations)}。对比 ZB-H1（makespan {tl_h1.makespan:g}，峰值 {max(tl_h1.peak_activations):g}）"
   f"和 ZB-H2（makespan {tl_h2.makespan:g}，峰值 {max(tl_h2.peak_activations):g}）："
   + claim(max(tl_zbv.peak_activations) <= p, "ZB-V 用 1F1B 的显存做到了零空闲，", peaks=tl_zbv.peak_activations)
   + f"而且 makespan 等于它的下界 $m(F+B+W) + (p-1)F/2 = {bound:g}$：最后一个 rank 至少要等 $p-1$ 个半 stage 的前向才有活干。")

# %% [markdown]
# PyTorch 的 `ScheduleZBVZeroBubble` 实现的也是 ZB-V。把它排出的顺序翻译成 `Plan`（`course.torch_bridge`，不建进程组）对照一下：

# %%
from course.torch_bridge import torch_plan  # noqa: E402  (imports torch)

theirs = torch_plan("ScheduleZBVZeroBubble", p, m)
same_order = theirs.format() == zbv.format() and theirs.placement == zbv.placement
md(f"$p={p}, m={m}$：torch 的 ZB-V 顺序与本库的 `zbv` " + claim(same_order, "逐个算子完全相同", otherwise="**不同**") + "；"
   f"同样的代价下模拟的 makespan 分别是 {simulate(theirs, costs).makespan:g} 和 {tl_zbv.makespan:g}。")

# %% [markdown]
# ## 2. DualPipe：两端同时进
#
# 两端同时进的想法来自 Chimera（Li & Hoefler, 2021）：两条方向相反的流水线共用同一组设备，每个设备存两份模型的各一段。
# DualPipe 有两条路线。本库把副本 A 的 stage 记为 $0..p-1$，副本 B 的记为 $p..2p-1$：

# %%
m = 4 * p                             # a longer run, so the steady F&B phase shows
dual = build("dualpipe", p, m)
owner = dual.rank_of_stage()
directions = sorted({tuple(r) for r in dual.routes})
for route in directions:
    users = [i for i, r in enumerate(dual.routes) if tuple(r) == route]
    print(f"micro-batches {users[0]}..{users[-1]}: stages {list(route)} on ranks {[owner[s] for s in route]}")
print("placement:", dual.placement)
params = formulas.parameters_per_rank(dual)
md(f"一半 micro-batch 从 rank 0 进入，另一半从 rank {p - 1} 进入。每个 rank 持有两个完整 stage（各为模型的 $1/p$），"
   f"参数是 1F1B 的 {params[0]:g} 倍（`formulas.parameters_per_rank`）。")

# %%
tl_dual = simulate(dual, costs)
fig = plots.compare([tl_dual], memory_too=True)
md(f"DualPipe（$p={p}, m={m}$，重叠系数 `overlap` = {costs.overlap:g}，即 F&B 的时长等于 F 加 B）："
   f"makespan **{tl_dual.makespan:g}**，窗口内空闲 {rounded(tl_dual.idle)}，激活峰值 {rounded(tl_dual.peak_activations)}"
   + claim(max(tl_dual.peak_activations) == p + 1, f"（$p+1 = {p + 1}$）。", peaks=tl_dual.peak_activations)
   + "紫色的块是 F&B：一个方向的前向和另一个方向的反向配成一对。")

# %% [markdown]
# ### DualPipe 的八个阶段
#
# 每个 rank 的顺序由同一段八个阶段的代码生成（`course.schedules.dualpipe.dualpipe_phases`，阶段的名字取自 DeepSeek
# `dualpipe.py` 的注释；"0"、"1" 是 rank 的两个 chunk，0 是先收到新 micro-batch 的那个）。下面给每一步标上它所属的阶段：

# %%
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from course.schedules.dualpipe import dualpipe_phases  # noqa: E402

PHASES = ["1 nF0: warm-up forwards", "2 nF0F1: both chunks", "3 nB1W1F1: zero bubble", "4 nF0B1F1B0: main, F&B pairs",
          "5 nB1F1B0: drain starts", "6 nB1B0: backwards (2nd half defers W)", "7 nWB0: zero bubble", "8 nW: weights"]


def phase_of_steps(name, p, m):
    """Per rank, the phase (0..7) of each step of build(name, p, m): walks the same generator the plan came from."""
    out = []
    for r in range(p):
        n, h, c = (p // 2, min(r, p - 1 - r), m // 2) if name == "dualpipe" else (p, r, m)
        main = c - 2 * n + h + 1
        items_per_phase = [2 * (n - h - 1), 2 * (h + 1), 3 * (n - h - 1),
                           2 * main + (1 if h == n - 1 and main > 0 else 0),   # the turning rank splits its first pair
                           2 * (n - h - 1), 2 * (h + 1), 2 * (n - h - 1), h + 1]
        items, labels = iter(dualpipe_phases(n, h, c)), []
        for phase, count in enumerate(items_per_phase):
            for _ in range(count):
                item = next(items)
                steps = 2 if item.kind == "FB" or (item.kind == "B" and not item.defer_w) else 1   # a W right after
                labels += [phase] * steps
        assert next(items, None) is None
        out.append(labels)
    return out


def draw_phases(name, p, m, costs, ax):
    plan, colors = build(name, p, m), plt.get_cmap("tab10").colors
    tl = simulate(plan, costs)
    for r, (spans, phases) in enumerate(zip(tl.spans, phase_of_steps(name, p, m))):
        assert len(spans) == len(phases)
        ax.broken_barh([(sp.start, sp.end - sp.start) for sp in spans], (r - 0.4, 0.8),
                       facecolors=[colors[k] for k in phases], edgecolor="white", linewidth=0.3)
    ax.set_yticks(range(p), [f"rank {r}" for r in range(p)])
    ax.invert_yaxis()
    ax.set_xlabel("time (cost units)")
    ax.set_title(f"{name}, p={p}, m={m}: each step coloured by its phase")
    ax.legend(handles=[Patch(color=colors[k], label=PHASES[k]) for k in range(8)], fontsize=7,
              loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


fig, ax = plt.subplots(figsize=(12, 3.2))
draw_phases("dualpipe", p, m, costs, ax)
plt.show()
main_phase = [sum(1 for k in ph if k == 3) for ph in phase_of_steps("dualpipe", p, m)]
md(f"每个 rank 在主阶段（4）的步数是 {main_phase}："
   + claim(main_phase[0] == min(main_phase) and main_phase[p // 2] == max(main_phase) and main_phase == main_phase[::-1],
           "中间的 rank 主阶段最长，两端最短，左右对称：两个方向的 micro-batch 在中间相遇，那里的 rank 最早两个方向都有活干、"
           "最早开始配对；两端的 rank 要等对面进来的 micro-batch 走完半条流水线。",
           main_phase=main_phase))

# %% [markdown]
# ## 3. F&B 重叠：把通信藏起来
#
# DualPipe 的动机是专家并行（EP）：每个 MoE 层的前向和反向都有两次跨节点的 all-to-all（dispatch、combine），
# 通信时间和计算相当。模拟器里 F&B 一对的时长是 `overlap` $\times (F+B)$；这个系数从哪来，要看一对里面发生了什么。
#
# 一个 MoE block 的前向 chunk 是一条链：attention（计算）→ dispatch（all-to-all）→ 专家 MLP（计算）→ combine（all-to-all）。
# 反向 chunk 倒过来：combine 的反向（all-to-all）→ MLP 反向（计算，约为前向的 2 倍）→ dispatch 的反向（all-to-all）→
# attention 反向（计算）。单独跑一个 chunk，all-to-all 期间 GPU 的计算单元空着。配成一对以后，GPU 上有两条流：计算流和通信流，
# 每一小段等它那条链上的前一段做完、并且它那条流空出来就开始（`course.overlap.pair_schedule`）。

# %% [markdown]
# **预测：** 设 attention、MLP 的前向各 1 个单位，dispatch、combine 也各 1 个单位（通信和计算一样长），反向的计算是前向的 2 倍。
# 一对 F&B 的时长是两个 chunk 串行的几倍（即 `overlap`）？

# %%
guess_overlap = None    # a number between 0 and 1

# %%
from course.overlap import COMM, COMPUTE, block_chunks, overlap_coefficient, pair_schedule  # noqa: E402

one_to_one = block_chunks(attention=1, mlp=1, dispatch=1, combine=1)
pair = pair_schedule(one_to_one)
fig, ax = plt.subplots(figsize=(9, 1.8))
for s in pair:
    y = 0 if s.stream == COMPUTE else 1
    ax.broken_barh([(s.start, s.end - s.start)], (y - 0.35, 0.7), facecolors="#4C72B0" if s.chunk == "F" else "#C44E52",
                   edgecolor="white")
    ax.text((s.start + s.end) / 2, y, f"{s.chunk} {s.name}", ha="center", va="center", fontsize=7, color="white")
ax.set_yticks([0, 1], [COMPUTE, COMM])
ax.invert_yaxis()
ax.set_xlabel("time")
ax.set_title("one F&B pair on two streams (blue: forward chunk, red: backward chunk)")
plt.show()
compute_total = sum(d for chain in one_to_one.values() for _, s, d in chain if s == COMPUTE)
comm_total = sum(d for chain in one_to_one.values() for _, s, d in chain if s == COMM)
ov_1 = overlap_coefficient(one_to_one)

# %%
md(reveal(guess_overlap, round(ov_1, 4),
          f"两个 chunk 串行要 {compute_total + comm_total:g}（计算 {compute_total:g}，通信 {comm_total:g}），配对后 "
          f"{max(s.end for s in pair):g}。"
          + claim(abs(ov_1 - max(compute_total, comm_total) / (compute_total + comm_total)) < 1e-9,
                  "通信全部落在另一个 chunk 的计算下面，一对的长度就是较长的那条流：`overlap` $= \\max(C, K)/(C+K)$，"
                  "$C$、$K$ 是一对里的计算和通信总量。", ov=ov_1)))

# %% [markdown]
# 通信占比变化时，`overlap` 怎样变？DeepSeek-V3 还把 132 个 SM 里的 20 个留给通信内核，计算只用剩下的，慢
# $132/112$ 倍；下表两列都算。再把推出来的系数交给模拟器：

# %%
rows = ["| all-to-all / compute | overlap | overlap, 20 of 132 SMs for comm | DualPipe makespan | DualPipeV makespan | ZB-V makespan |",
        "|---|---|---|---|---|---|"]
derived = {}
for ratio in (0.0, 0.25, 0.5, 1.0):
    chunks = block_chunks(attention=1, mlp=1, dispatch=ratio, combine=ratio)
    ov = overlap_coefficient(chunks)
    c = Costs(f=1, b=1, w=1, overlap=ov)
    spans = {name: simulate(build(name, p, m), c).makespan for name in ("dualpipe", "dualpipev", "zbv")}
    derived[ratio] = (ov, spans)
    rows.append(f"| {ratio:g} | {ov:.3g} | {overlap_coefficient(chunks, sm_share=20 / 132):.3g} | "
                + " | ".join(f"{spans[k]:.4g}" for k in ("dualpipe", "dualpipev", "zbv")) + " |")
md(f"$p={p}, m={m}$, $F=B=W=1$：\n\n" + "\n".join(rows))
zbv_flat = len({round(s["zbv"], 9) for _, s in derived.values()}) == 1
dual_falls = all(a[1]["dualpipe"] > b[1]["dualpipe"] and a[1]["dualpipev"] > b[1]["dualpipev"]
                 for a, b in zip(list(derived.values()), list(derived.values())[1:]))
md(claim(zbv_flat and dual_falls,
         "ZB-V 没有 F&B 步，不受 `overlap` 影响；DualPipe 和 DualPipeV 的 makespan 随通信占比、也就是随 `overlap` 下降。"
         "这正是 DualPipe 的卖点：在通信很重的 MoE 训练里，bubble 之外还有一大块时间可以靠重叠拿回来。"
         "反过来，没有通信可藏时（比值 0）配对不省任何时间，留给通信的 SM 还让计算变慢。",
         derived=derived))

# %% [markdown]
# ### 配对需要双向吗？
#
# 1F1B 的稳定段里，每个 rank 本来就交替做两个不同 micro-batch 的 F 和 B，看上去直接把它们配成一对就行。下面把单向的
# 1F1B 改成配对的版本：rank $r$ 先做 $w_r$ 个前向，然后每一步是一对 $F_{j+w_r}$&$B_j$，最后做完剩下的反向。

# %% [markdown]
# **预测：** 预热照 1F1B 做（$w_r = p - r$，比 1F1B 多一个），`overlap` = 0.7 时，配对版的 makespan 比不配对的 1F1B 长还是短？
# 写 `"longer"` 或 `"shorter"`。

# %%
guess_pairing = None    # "longer" or "shorter"

# %%
from course.plan import Op, Overlap, Plan  # noqa: E402


def paired_1f1b(p, m, warmup):
    """One-directional 1F1B with F&B pairs: rank r runs warmup(r) forwards, then pairs F_{j+w} & B_j, then the rest."""
    ranks = []
    for r in range(p):
        w = min(m, warmup(r))
        steps = [Op("F", i, r) for i in range(w)]
        steps += [Overlap(Op("F", j + w, r), Op("B", j, r)) for j in range(m - w)]
        steps += [Op("B", j, r) for j in range(m - w, m)]
        ranks.append(steps)
    return Plan(ranks, m, name="1f1b-paired")


m_pair = 2 * p
pair_costs = Costs(f=1, b=1, w=0, overlap=0.7)
plain_1f1b = simulate(build("1f1b", p, m_pair), pair_costs)
shallow = simulate(paired_1f1b(p, m_pair, lambda r: p - r), pair_costs)
deep = simulate(paired_1f1b(p, m_pair, lambda r: 1 + 2 * (p - 1 - r)), pair_costs)
folded = simulate(build("dualpipev", p, m_pair), pair_costs)
rows = ["| plan | makespan | peak activations (1F1B units) |", "|---|---|---|"]
for label, tl in (("1F1B, no pairs", plain_1f1b), ("1F1B pairs, warm-up p-r", shallow),
                  ("1F1B pairs, warm-up 1+2(p-1-r)", deep), ("DualPipeV (one route, V-folded)", folded)):
    rows.append(f"| {label} | {tl.makespan:.4g} | {rounded(tl.peak_activations)} |")
md(f"$p={p}$, $m={m_pair}$, $F=B=1$, $W=0$, `overlap` = {pair_costs.overlap:g}：\n\n" + "\n".join(rows))

# %%
md(reveal(guess_pairing, "longer" if shallow.makespan > plain_1f1b.makespan else "shorter",
          claim(shallow.makespan > plain_1f1b.makespan and deep.makespan < plain_1f1b.makespan
                and max(deep.peak_activations) > max(folded.peak_activations),
                f"照 1F1B 的预热配对反而更慢（{shallow.makespan:.4g} 对 {plain_1f1b.makespan:.4g}）：一对里的 F 要发给下一个 rank，"
                "B 要发给上一个 rank，而下一个 rank 的那一对又在等这个 B 的梯度，于是每一棒都要等相邻 rank 的整对做完。"
                f"把预热加深到 $1+2(p-1-r)$，每个 rank 手里多两个 micro-batch，配对就不再拖慢：makespan {deep.makespan:.4g}，"
                f"比 DualPipeV 的 {folded.makespan:.4g} 只差一点。代价是激活峰值 {max(deep.peak_activations):g}，"
                f"DualPipeV 只要 {max(folded.peak_activations):g}。所以配对并不需要双向；双向（或 V 形折返）换来的是"
                "一对里 F 和 B 的数据流向同一个邻居，在 1F1B 量级的显存下就能配对，而且把灌满和排空减半（公式里的 $PP/2$）。",
                shallow=shallow.makespan, plain=plain_1f1b.makespan, deep=deep.makespan, folded=folded.makespan)))

# %% [markdown]
# ## 4. DualPipeV：折成 V，省掉一份参数
#
# DualPipeV 把 DualPipe 的顺序套在 V 形放置上：只有一条路线，$2p$ 个半 stage 的 chunk，rank $r$ 持有第 $r$ 和第 $2p-1-r$ 个。
# 它相当于 $2p$ 个 rank 的 DualPipe 把每对 rank 合并成一个。

# %%
dualv = build("dualpipev", p, m)
tl_dualv = simulate(dualv, costs)
fig = plots.compare([tl_dual, tl_dualv])
md(f"DualPipeV（$p={p}, m={m}$）：参数 {formulas.parameters_per_rank(dualv)[0]:g} 倍（DualPipe 是 {params[0]:g} 倍），"
   f"makespan **{tl_dualv.makespan:g}**，窗口内空闲 {rounded(tl_dualv.idle)}，"
   f"激活峰值 {rounded(tl_dualv.peak_activations)} 份 1F1B 单位，即 {2 * max(tl_dualv.peak_activations):g} 个半 stage 的 chunk"
   f"（$PP+1$，$PP = 2p = {2 * p}$）。")

# %% [markdown]
# ### 4.1 以字节计：V 形放置和 DualPipe 的两份参数
#
# 上面的"份"和"倍"换成 GB。取 Llama 3 70B（80 层，$s=8192$，TP=8 + SP，选择性重算），$p=8$、$m=32$，每个参数按混合精度 Adam 记 16 字节（权重 2、梯度 2、fp32 主权重和两个动量 12）。embedding 跟着第一个 chunk，lm_head 和最后的 norm 跟着最后一个 chunk：V 形放置里这两个 chunk 都在 rank 0 上。

# %%
import matplotlib.pyplot as plt

from course.memory import PRESETS, ActivationConfig, pipeline_memory

LLAMA70 = PRESETS["llama3-70b"]
cfg70 = ActivationConfig(seq=8192, mbs=1, tp=8, sp=True, recompute="selective")
P_REAL, M_REAL, GPU = 8, 32, 80e9
shapes = {name: pipeline_memory(build(name, P_REAL, M_REAL), LLAMA70, cfg70)
          for name in ("1f1b", "zbv", "dualpipe", "dualpipev")}
fig, axes = plt.subplots(1, len(shapes), figsize=(16, 3.4), sharey=True)
for ax, (name, pm) in zip(axes, shapes.items()):
    plots.memory_bars(pm.ranks, ax=ax, gpu_mem=GPU, title=f"{name}, p={P_REAL}, m={M_REAL}")
plt.show()
md("| 调度 | rank 0 的参数状态 | rank 1 的参数状态 | rank 0 的激活峰值 | 最忙的 rank 一共 |\n|---|---|---|---|---|\n"
   + "\n".join(f"| {name} | {pm.ranks[0].static / 1e9:.1f} GB | {pm.ranks[1].static / 1e9:.1f} GB | "
               f"{pm.ranks[0].activations / 1e9:.1f} GB | {max(pm.peak) / 1e9:.1f} GB |" for name, pm in shapes.items()))

# %%
plain, v_shape, dual_, dual_v = (shapes[n] for n in ("1f1b", "zbv", "dualpipe", "dualpipev"))
emb_bytes = 16 * LLAMA70.vocab * LLAMA70.hidden // cfg70.tp          # one vocabulary-parallel table per TP rank
v_extra = v_shape.ranks[0].static - v_shape.ranks[1].static
md(claim(abs(v_extra - 2 * emb_bytes) <= 16 * LLAMA70.hidden and plain.ranks[0].static < v_shape.ranks[0].static,
         f"V 形放置（ZB-V、DualPipeV）把 embedding 和 lm_head 都放在 rank 0：它比 rank 1 多 {v_extra / 1e9:.1f} GB 参数状态"
         f"（两张 {LLAMA70.vocab} × {LLAMA70.hidden} 的表，每张按 TP 切成 {cfg70.tp} 份后是 {emb_bytes / 1e9:.2f} GB）；"
         f"1F1B 里这两张表分在 rank 0 和 rank {P_REAL - 1}，各 {plain.ranks[0].static / 1e9:.1f} GB。"
         "词表越大，rank 0 越重：这就是 V 形调度常把 rank 0 少分几层、或者把词表再切开的原因。",
         v_extra=v_extra, emb=emb_bytes))
doubled = all(d.static == plain.ranks[r].static + plain.ranks[P_REAL - 1 - r].static for r, d in enumerate(dual_.ranks))
md(claim(doubled and dual_v.ranks[1].static == plain.ranks[1].static,
         f"DualPipe 的 rank $r$ 同时持有副本 A 的第 $r$ 段和副本 B 的第 $p-1-r$ 段，参数、梯度和优化器状态都是两份："
         f"rank 1 上 {dual_.ranks[1].static / 1e9:.1f} GB，1F1B 只要 {plain.ranks[1].static / 1e9:.1f} GB。"
         f"DualPipeV 折成 V 以后每个 rank 回到一份（rank 1 {dual_v.ranks[1].static / 1e9:.1f} GB），"
         f"最忙的 rank 从 {max(dual_.peak) / 1e9:.1f} GB 降到 {max(dual_v.peak) / 1e9:.1f} GB。",
         dual=[r.static for r in dual_.ranks], plain=[r.static for r in plain.ranks]))

# %% [markdown]
# ## 5. 复现 DeepSeek 的表格
#
# DeepSeek-V3 技术报告（以及 DualPipe 仓库的 README）画了一张 DualPipe 的示意图（下面用同样的 rank 数和 micro-batch 数重画），并给出一张比较表（$PP$ 是流水线的 stage 数，F、B、W 是一个 chunk 的
# 前向、完整反向、权重梯度时间，F&B 是一对重叠的前向加反向的时间）。README 后来的版本按设备列出参数和激活，并加了设备数一列：
#
# | 方法 | bubble | 每个设备的参数 | 每个设备的激活 | 设备数 |
# |---|---|---|---|---|
# | 1F1B | $(PP-1)(F+B)$ | 1× | $PP$ | $PP$ |
# | ZB1P | $(PP-1)(F+B-2W)$ | 1× | $PP$ | $PP$ |
# | DualPipe | $(PP/2-1)(F\&B+B-3W)$ | 2× | $PP+1$ | $PP$ |
# | DualPipeV | $(PP/2-1)(F\&B+B-3W)$ | 2× | $PP+1$ | $PP/2$ |
#
# DualPipeV 一行的 $PP$ 数的是 chunk：$PP/2$ 个设备各持有两个 chunk，所以"2×"是相对一个 chunk 而言；换成本库的口径（相对同样 rank 数的 1F1B，$p = PP/2$）就是 1×，激活是 $p + 1/2$ 份 1F1B 单位。
#
# 要用模拟器复现，先把表格没写出来的假设写清楚：
#
# - 每个 stage 的 F、B、W 相同，点对点延迟为零，micro-batch 一样大；DualPipe 需要偶数的 $p$ 和偶数的 $m \ge 2p$。
# - "bubble"是一个 rank 在一次迭代里的空等：makespan 减去它的忙碌时间，取最坏的那个 rank。
# - "激活"是峰值，单位是一个 micro-batch 在一个 stage 上的激活；"参数"以 1F1B 每个 rank 的参数为 1×。
# - 表里的 B 是完整反向（本库的 `b + w`），ZB1P 即 ZB-H1；F&B 换算为 `overlap`$\times$(f + b) + w。
#
# `formulas.dualpipe_table` 把公开值和模拟值并排算出来：

# %%
P8, M8 = 8, 20


def table(costs):
    rows = ["| method | devices | bubble (published) | bubble (simulated) | parameters per device (published / sim) | "
            "activations per device (published / sim) |", "|---|---|---|---|---|---|"]
    data = formulas.dualpipe_table(P8, M8, costs)
    for r in data:
        rows.append(f"| {r['method']} | {P8} | {r['bubble_published']:g} | {r['bubble_simulated']:g} | "
                    f"{r['parameters_published']:g} / {r['parameters_simulated']:g} | "
                    f"{r['activations_published']:g} / {r['activations_simulated']:g} |")
    return data, "\n".join(rows)


equal = Costs(f=1, b=1, w=1)
data_equal, text_equal = table(equal)
md(f"$PP = p = {P8}$, $m = {M8}$, $F=B=W={equal.f:g}$（一个 rank 那一份），`overlap` = {equal.overlap:g}；"
   "参数和激活按本库的口径（同样的 rank 数、1F1B 单位），所以每一行的设备数相同：\n\n" + text_equal)
ax = plots.gantt(simulate(build("dualpipe", P8, M8), equal), labels=False,
                 title=f"dualpipe, p={P8}, m={M8} (the setting of DeepSeek's schedule figure)")

# %%
by = {r["schedule"]: r for r in data_equal}
agree = [r["method"] for r in data_equal if abs(r["bubble_published"] - r["bubble_simulated"]) < 1e-9]
differ = [r["method"] for r in data_equal if r["method"] not in agree]
assert all(abs(r[f"{col}_published"] - r[f"{col}_simulated"]) < 1e-9
           for r in data_equal for col in ("parameters", "activations")), data_equal
md(f"参数和激活两列全部吻合：DualPipe 是 {by['dualpipe']['parameters_simulated']:g}× 参数、峰值 "
   f"{by['dualpipe']['activations_simulated']:g} 份（$PP+1$），DualPipeV 是 {by['dualpipev']['parameters_simulated']:g}× 参数、"
   f"{by['dualpipev']['activations_simulated']:g} 份 1F1B 单位（即 $2p+1$ 个半 stage）。"
   f"bubble 一列，{', '.join(agree) or '没有一行'} 与公式一致；{', '.join(differ) or '没有'} 不一致："
   f"DualPipe 公式给 {by['dualpipe']['bubble_published']:g}，模拟只有 {by['dualpipe']['bubble_simulated']:g}。")

# %% [markdown]
# 不一致不是顺序写错了（本库的 `dualpipe` 按 DeepSeek 的八个阶段逐步生成），而是**什么时候放出 $\mathrm{d}X$**：
# 本库计划里的 B 只是输入梯度，B 一结束 $\mathrm{d}X$ 就发给上一个 rank，W 随后再做。DeepSeek 的 `dualpipe.py` 里，
# `_backward_compute_chunk(enable_zb=False)` 做一次完整的 autograd 反向（$\mathrm{d}X$ 和 $\mathrm{d}W$ 一起），之后才
# `_send_backward`；只有 `enable_zb=True` 的反向（阶段 3、7 和阶段 6 的后一半）把 $\mathrm{d}W$ 留到后面。
#
# 不改模拟器也能检验这件事：`course.replay.whole_backward` 把"紧跟着自己 W 的 B"（没有推迟的反向）的时长加上 W、W 本身记 0，
# `course.replay.replay` 按这些时长重放同一个 plan，$\mathrm{d}X$ 就在 W 之后才放出。可以只对 F&B 里的反向这样做，
# 也可以对所有没推迟 W 的反向都这样做（DeepSeek 代码的行为）。

# %% [markdown]
# **预测：** $F=B=W=1$ 时，按 DeepSeek 代码的规则（所有没推迟 W 的反向都是整块）重新计时，DualPipe 的 bubble 是多少？公式给的是上表的值。

# %%
guess_whole = None      # a number

# %%
from course.replay import replay, whole_backward  # noqa: E402


def bubbles(name, c):
    """Worst rank's makespan - busy under three rules for when dX leaves: B alone, pair's B whole, every undeferred B whole."""
    plan = build(name, P8, M8)
    out = {"published": formulas.published_bubble(name, P8, c)}
    for label, tl in (("dX after B", simulate(plan, c)),
                      ("F&B backward whole", replay(plan, whole_backward(plan, c, pairs_only=True))),
                      ("every undeferred backward whole", replay(plan, whole_backward(plan, c)))):
        out[label] = max(tl.makespan - b for b in tl.busy)
    return out


rule_rows = ["| schedule | costs | published | dX after B (this course) | F&B backward whole | every undeferred backward whole (DeepSeek's code) |",
             "|---|---|---|---|---|---|"]
rules = {}
for name in ("dualpipe", "dualpipev"):
    for label, c in (("F=B=W=1", Costs(f=1, b=1, w=1)), ("F=B=W=1, overlap 0.7", Costs(f=1, b=1, w=1, overlap=0.7)),
                     ("F=B=1, W=0.5", Costs(f=1, b=1, w=0.5)), ("F=B=1, W=0", Costs(f=1, b=1, w=0))):
        rules[name, label] = bubbles(name, c)
        rule_rows.append(f"| {name} | {label} | " + " | ".join(f"{x:.4g}" for x in rules[name, label].values()) + " |")
md(f"$PP = p = {P8}$, $m = {M8}$：\n\n" + "\n".join(rule_rows))

# %%
equal_rule = rules["dualpipe", "F=B=W=1"]
pair_rule_hits = [k for k, v in rules.items() if abs(v["F&B backward whole"] - v["published"]) < 1e-9]
md(reveal(guess_whole, equal_rule["every undeferred backward whole"],
          claim(all(abs(v["dX after B"] - v["published"]) < 1e-9 for k, v in rules.items() if k[1] == "F=B=1, W=0")
                and all(k in pair_rule_hits for k in rules if k[1].startswith("F=B=W=1"))
                and equal_rule["every undeferred backward whole"] > equal_rule["published"] > equal_rule["dX after B"],
                f"按 DeepSeek 代码的规则是 {equal_rule['every undeferred backward whole']:g}，比公式的 "
                f"{equal_rule['published']:g} 还大；本库的规则是 {equal_rule['dX after B']:g}。只把 F&B 里的反向当整块，"
                "$F=B=W$ 时（不论 `overlap`）DualPipe 和 DualPipeV 都正好得到公式的值，$W=0$ 时三种规则都与公式一致。"
                "所以公式描述的是\"F&B 里的反向整块、其余反向先放 $\\mathrm{d}X$\"、格子等宽的示意图；"
                f"$W$ 取其他值时（如 $W = 0.5$），哪种规则都不再等于公式：{rules['dualpipe', 'F=B=1, W=0.5']}。",
                rules=rules, pair_rule_hits=pair_rule_hits)))

# %% [markdown]
# 再换几组 F、B 的比例，看公式和本库的模拟在哪里一致：

# %%
cases = {
    "F = B, W = 0": Costs(f=1, b=1, w=0),
    "F = B, W = 0, overlap 0.7": Costs(f=1, b=1, w=0, overlap=0.7),
    "F = B = W": Costs(f=1, b=1, w=1),
    "F = 2B, W = 0": Costs(f=2, b=1, w=0),
    "B = 2F, W = 0": Costs(f=1, b=2, w=0),
}
rows = ["| costs | DualPipe published | DualPipe simulated | DualPipeV published | DualPipeV simulated |",
        "|---|---|---|---|---|"]
verdict, published_vs_sim = {}, {}
for label, c in cases.items():
    got = {r["schedule"]: r for r in formulas.dualpipe_table(P8, M8, c)}
    pairs = [(got[s]["bubble_published"], got[s]["bubble_simulated"]) for s in ("dualpipe", "dualpipev")]
    verdict[label] = all(abs(a - b) < 1e-6 for a, b in pairs)
    published_vs_sim[label] = pairs[0]                       # DualPipe's (published, simulated)
    rows.append(f"| {label} | " + " | ".join(f"{x:.4g}" for pair in pairs for x in pair) + " |")
md(f"$PP = p = {P8}$, $m = {M8}$：\n\n" + "\n".join(rows))
same = [k for k, ok in verdict.items() if ok]
assert verdict["F = B, W = 0"] and verdict["F = B, W = 0, overlap 0.7"] and not verdict["F = B = W"], verdict
f_gt_b = {k: got for k, got in published_vs_sim.items() if k.startswith("F = 2B")}
b_gt_f = {k: got for k, got in published_vs_sim.items() if k.startswith("B = 2F")}
md(f"公式与模拟一致的情形：{'；'.join(same) or '无'}。不一致的情形：{'；'.join(k for k in verdict if k not in same) or '无'}。"
   + claim(all(a < b for a, b in f_gt_b.values()) and all(a > b for a, b in b_gt_f.values()),
           "规律是：$F = B$ 且 $W = 0$ 时（无论 `overlap` 多少）两者相同；$W > 0$ 时模拟更小，原因就是上面说的 $\\mathrm{d}X$ 放出时机；"
           "$F \\ne B$ 时公式本身只是近似，偏大偏小都有："
           + "；".join(f"{k} 时公式 {a:g}、模拟 {b:g}" for k, (a, b) in {**f_gt_b, **b_gt_f}.items())
           + "。它是按 DeepSeek 示意图里等宽的格子推出来的。",
           f_gt_b=f_gt_b, b_gt_f=b_gt_f))

# %% [markdown]
# 结论：表格的参数和激活两列在它的假设下完全可复现；bubble 一列在"F&B 里的反向整块执行"的规则下、$F=B=W$ 或 $W=0$ 的等宽格子里精确成立。
# 当 W 可以从反向里拆出来单独排（正是上一章零 bubble 的前提），同样的 DualPipe 顺序 bubble 更小；DeepSeek 代码里其余没推迟 W 的反向
# 也是整块，实际的 bubble 比公式大。引用这张表时要带上它的假设。
#
# ## 6. 自己动手
#
# 选调度、rank 数（偶数）、micro-batch 数（`m_per_2p`：$m = 2p \times$ 它）和重叠系数。留意：`overlap` 只影响有 F&B 步的 DualPipe 和 DualPipeV；
# ZB-V 的激活峰值不随 $m$ 增长，DualPipe 的峰值始终是 $p+1$。

# %%
def v_and_bidirectional(fig, schedule, p, m_per_2p, overlap):
    m = 2 * p * m_per_2p                 # DualPipe and DualPipeV need m >= 2p (DualPipe also an even m)
    tl = simulate(build(schedule, p, m), Costs(f=1, b=1, w=1, overlap=overlap))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    plots.gantt(tl, ax=left, labels=False,
                title=f"{schedule}, p={p}, m={m}, overlap={overlap:.2f}: makespan {tl.makespan:.4g}, "
                      f"max idle {max(tl.idle):.3g}")
    plots.memory(tl, ax=right)


explorer = explore(v_and_bidirectional, figsize=(12, 3.8), schedule=["dualpipe", "dualpipev", "zbv", "zb-h1"],
                   p=(2, 8, 4, 2), m_per_2p=(1, 2, 1), overlap=(0.5, 1.0, 1.0, 0.05))

# %% [markdown]
# **任务：** 选 `dualpipev`、$p=4$、`m_per_2p` = 1，把 `overlap` 从 1 往下拖：从哪个值起，DualPipeV 的 makespan 比同样设置下 `zbv` 的短？写进 `answer_overlap`。

# %%
answer_overlap = None   # a value on the slider, 0.5 .. 1.0

# %%
zbv_span = simulate(build("zbv", 4, 8), Costs(f=1, b=1, w=1)).makespan
slider_ov = [round(1.0 - 0.05 * k, 2) for k in range(11)]
v_spans = {ov: simulate(build("dualpipev", 4, 8), Costs(f=1, b=1, w=1, overlap=ov)).makespan for ov in slider_ov}
beats = [ov for ov, span in v_spans.items() if span < zbv_span - 1e-9]
md(reveal(answer_overlap, max(beats) if beats else None,
          claim(bool(beats) and abs(v_spans[1.0] - zbv_span) < 1e-9,
                f"ZB-V 是 {zbv_span:g}，不受 `overlap` 影响；DualPipeV 在 `overlap` = 1 时和它一样长，"
                f"`overlap` $\\le$ {max(beats) if beats else 0:g} 时更短。两者放置相同、显存同一量级，"
                "只要配对能藏住一点通信，DualPipeV 就占优。", beats=beats, v_spans=v_spans)))

# %% [markdown]
# ## 怎么讲清楚
#
# - **ZB-V**：$2p$ 个半 stage 的 chunk 按 V 形放置（rank $r$ 持有 $r$ 和 $2p-1-r$），转折处在本 rank 上接着算；
#   $F=B=W$ 时每个 rank 窗口内零空闲，激活峰值和 1F1B 相同，makespan 达到下界。
# - **DualPipe**：两个方向的 micro-batch 从两端同时进入，每个 rank 存两份 stage（2× 参数），激活峰值 $p+1$；
#   八个阶段里，主阶段（4）一个方向的前向和另一个方向的反向配成 F&B，让 EP 的 all-to-all 藏在计算后面。
# - **F&B 重叠**：一对 F&B 在计算流和通信流上交错，长度约为较长的那条流，`overlap` $\approx \max(C, K)/(C+K)$；
#   没有通信可藏时配对不省时间。
# - **配对不需要双向**：单向 1F1B 也能配对，但要把预热加深一倍、多存一倍激活才不拖慢；双向或 V 形折返让一对的数据流向同一个邻居，
#   在 1F1B 量级的显存下配对，并把灌满和排空减半。
# - **DualPipeV**：同样的顺序折成 V 形，一份参数。
# - **表格**：参数、激活两列在"均匀 stage、零延迟"的假设下由模拟精确复现；bubble $(PP/2-1)(F\&B+B-3W)$ 对应 F&B 里的反向整块执行
#   （$\mathrm{d}W$ 算完才放出 $\mathrm{d}X$），$F=B=W$ 或 $W=0$ 时重放结果与它完全相同；W 拆开单独排时，同样的顺序 bubble 更小；
#   DeepSeek 代码里其余没推迟的反向也是整块，bubble 更大；$F \ne B$ 时公式只是近似。
#
# ## 练习
#
# - `v-placement`（★☆☆）：从三条要求推出 V 形放置（推广到 $v$ 个 chunk），数出一个 micro-batch 前向要跨 rank 几次。
# - `dualpipev-from-dualpipe`（★★★）：把 $2p$ 个 rank 上的 DualPipe 对折成 $p$ 个 rank 上的 DualPipeV：要哪一半、
#   stage 和 micro-batch 怎么重新编号。
# - `fb-overlap-order`（★★★）：在单向的普通流水线里设计一个用上 F&B 重叠的顺序：永远不比 1F1B 慢，
#   `overlap <= 0.75` 时至少快 10%，激活不超过 $2p$。
#
# ```bash
# python practice/judge.py start v-placement
# python practice/judge.py start dualpipev-from-dualpipe
# python practice/judge.py start fb-overlap-order
# ```
