# %% [markdown] intro
# ~~ zh 2cb4c9e6
# # 第 6 章　V 形与双向：ZB-V、DualPipe、DualPipeV
#
# 上一章的 ZB-H2 用 $2p-1$ 份激活换来了"窗口内零空闲"。能不能只用 1F1B 的显存就做到？ZB-V 的回答是换一种放置方式：
# 把模型切成 $2p$ 段、按 V 形摆在 rank 上。DeepSeek-V3 的 DualPipe 走得更远：micro-batch 从流水线两端同时进入，
# 一个前向和另一个 micro-batch 的反向配成一对重叠执行，让专家并行的 all-to-all 藏在计算后面；DualPipeV 再把 DualPipe 折成 V 形，
# 省掉第二份参数。本章用模拟器画出这三种调度，并把 DeepSeek 公开的"bubble / 参数 / 激活"表格逐项复现：
# 先写清楚表格的假设，再指出模拟和表格不一致的地方和原因。F&B 的重叠系数也不凭空给：第 3 节从一对 F&B 在计算流和通信流上的排布推出来。
# 本章的每条一般规律都在一片参数上检查过，正文写明检查的范围。术语见[术语表](glossary.md)。
#
# ## 自测
#
# 1. ZB-V 的 "V" 指什么？rank $r$ 持有哪两段？为什么最后一个 rank 不用把激活发出去就能接着算？
# 2. DualPipe 为什么每个 rank 要存两份参数？DualPipeV 是怎样省掉一份的？
# 3. DualPipe 的 F&B 重叠的是哪两件事？单向的 1F1B 在稳定阶段也是一前一后交替，能不能同样配对？"双向"到底换来了什么？
# 4. DeepSeek 表格里 DualPipe 的激活是 $PP+1$，它的单位是什么？和 1F1B 的 $PP$ 怎么比？
# 5. 表格里的 bubble $(PP/2-1)(F\&B+B-3W)$ 在什么条件下和本库的模拟一致？不一致时谁的 bubble 更小，为什么？
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
#    一个的通信（all-to-all、点对点）藏在另一个的计算后面。配对本身不需要双向：1F1B 的稳定阶段里每个 rank 本来就交替做
#    两个不同 micro-batch 的 F 和 B，只有一条路线的 DualPipeV 也在配对。单向配对的代价在依赖上：一对的 F 和 B 的输出要发给
#    相邻的两个方向，配成对后每一棒都要等整对做完，预热得加深一倍（激活也多一倍）才不拖慢（第 3 节）。双向（或 V 形折返）
#    让一对里 F 和 B 的数据流向同一个邻居，在 1F1B 量级的显存下就能配对，并把灌满和排空减半：公式里的 $PP/2$。
# 4. 单位是"一个 micro-batch 在一个 stage（chunk）上的激活"。DualPipe 的 stage 与 1F1B 一样大，峰值 $PP+1$ 只比 1F1B 多一份；
#    DualPipeV 的 chunk 只有半个 stage，$PP = 2p$ 个 chunk 的 $PP+1$ 折合 $p + 1/2$ 份 1F1B 单位。
# 5. $W = 0$ 且 $F = B$ 时完全一致。$W > 0$ 时（`overlap` 大于 0.5）模拟的 bubble 更小：本库的 B 一结束就把 $\mathrm{d}X$ 发出去，W 之后再做。
#    把 F&B 里的反向当成整块（$\mathrm{d}W$ 算完才放出 $\mathrm{d}X$）重新计时，$F=B=W$ 时正好得到公式的值；
#    DeepSeek 代码里所有没推迟 W 的反向都是整块，按这个规则计时，rank 多时 bubble 比公式还大（第 5 节）。
#
# </details>
# ~~ en 4f16da2c
# # Chapter 6. V shapes and two directions: ZB-V, DualPipe, DualPipeV
#
# Last chapter's ZB-H2 paid $2p-1$ micro-batches of activations for "no idle time inside each rank's window". Can we get there on 1F1B's memory? ZB-V's answer is a different placement:
# cut the model into $2p$ chunks and lay them on the ranks in a V. DeepSeek-V3's DualPipe goes further: micro-batches enter the pipeline from both ends at once,
# and the forward of one micro-batch runs overlapped with the backward of another, so that expert parallelism's all-to-all hides behind computation. DualPipeV then folds DualPipe into a V
# and drops its second copy of the parameters. This chapter draws the three schedules with the simulator and reproduces DeepSeek's published table (bubble, parameters, activations) entry by entry:
# first the table's assumptions, spelled out, then where simulation and table disagree, and why. The F&B overlap coefficient is not taken on faith either: section 3 derives it from how one F&B pair lays out on a compute stream and a communication stream.
# Every general rule in this chapter has been checked over a range of parameters, and the text says which range. The [glossary](../glossary.md) lists the terms.
#
# ## Self-test
#
# 1. What is the "V" in ZB-V? Which two chunks does rank $r$ hold? Why can the last rank carry on without sending its activations anywhere?
# 2. Why does every DualPipe rank keep two copies of parameters? How does DualPipeV get rid of one?
# 3. What exactly does DualPipe's F&B pair overlap? 1F1B's steady state also alternates one forward and one backward: could it pair them the same way? What do the two directions really buy?
# 4. DeepSeek's table gives DualPipe $PP+1$ activations. In what unit? How does that compare with 1F1B's $PP$?
# 5. Under what conditions does the table's bubble $(PP/2-1)(F\&B+B-3W)$ agree with this course's simulation? When they disagree, which bubble is smaller, and why?
#
# <details><summary>Answers (try first, then open)</summary>
#
# 1. The model is cut into $2p$ chunks and rank $r$ holds chunks $r$ and $2p-1-r$: the forward runs from rank 0 down to rank $p-1$ and back up from rank $p-1$ to rank 0,
#    like the letter V. Rank $p-1$ holds chunks $p-1$ and $p$; the output of one is the input of the other, so it carries on right there;
#    the last chunk sits on rank 0, and the backward starts on rank 0 too.
# 2. DualPipe has two routes in opposite directions: half the micro-batches enter at rank 0 and run through model copy A, the other half enter at rank $p-1$ and run through copy B.
#    Rank $r$ holds stage $r$ of A and stage $p-1-r$ of B, hence twice 1F1B's parameters (and the two copies' gradients must be summed).
#    DualPipeV has a single route: it folds $2p$ chunks into a V, two per rank, each half a stage, so each rank holds as many parameters as in 1F1B.
# 3. On one rank, the forward chunk of one micro-batch and the backward chunk of another. Their computation and communication interleave,
#    so one chunk's communication (all-to-all, point-to-point) hides under the other's computation. Pairing itself does not need two directions: in 1F1B's steady state every rank already alternates
#    the F and the B of two different micro-batches, and DualPipeV pairs with a single route. The cost of pairing in one direction is in the dependencies: the outputs of a pair's F and B go to
#    neighbours on opposite sides, so once paired every hand-over waits for a whole pair, and the warm-up must be twice as deep (twice the activations) for pairing not to slow things down (section 3). Two directions (or the V's turn)
#    send a pair's F and B data to the same neighbour, so pairing works at 1F1B-sized memory, and the fill and the drain are halved: the $PP/2$ in the formula.
# 4. The unit is "one micro-batch's activations on one stage (chunk)". DualPipe's stages are as large as 1F1B's, so its peak of $PP+1$ is just one more than 1F1B's;
#    DualPipeV's chunks are half a stage, so $PP+1$ with $PP = 2p$ chunks comes to $p + 1/2$ of 1F1B's units.
# 5. They agree exactly when $W = 0$ and $F = B$. With $W > 0$ (and `overlap` above 0.5) the simulated bubble is smaller: in this course B sends $\mathrm{d}X$ as soon as it ends and W runs later.
#    Re-timing with the backward inside each F&B as one block ($\mathrm{d}X$ leaves only after $\mathrm{d}W$) gives exactly the formula's value at $F=B=W$;
#    in DeepSeek's code every backward that does not defer its W is one block, and timed that way the bubble exceeds the formula once there are enough ranks (section 5).
#
# </details>

# %%
import functools

from course import figure, formulas, plots
from course.chapter import md, open_chapter
from course.claims import Sweep, claim, reveal, sweep
from course.costs import Costs
from course.schedules import build
from course.sim import simulate
from course.sim_compiled import CompiledPlan, compiled  # compiled(name, p, m): built once, simulated many times
from course.widgets import explore

text = open_chapter("06_dualpipe")
EPS = 1e-9


def close(a, b):
    return abs(a - b) <= EPS * max(1.0, abs(b))


def rounded(xs):
    return [round(x, 3) for x in xs]

# %% [markdown] zbv
# ~~ zh d51cc791
# ## 1. ZB-V：只用 1F1B 的显存做到零空闲
#
# ZB-V 来自 Zero Bubble 论文（Qi 等人 2024，第 6 节）。先看放置。`placement[r]` 是 rank $r$ 持有的 chunk，`routes[0]` 是一个 micro-batch 前向经过的 chunk 顺序：
# ~~ en 65a77511
# ## 1. ZB-V: no idle time on 1F1B's memory
#
# ZB-V comes from the Zero Bubble paper (Qi et al. 2024, section 6). Look at the placement first: `placement[r]` lists the chunks rank $r$ holds, and `routes[0]` the chunks a micro-batch's forward passes, in order:

# %% [text] zbv-placement
# ~~ zh afbbc21d
# | rank | 持有的 chunk |
# |---|---|
# {rows}
#
# 一个 micro-batch 前向经过的 rank：{path}。
# ~~ en 6402d923
# | rank | chunks held |
# |---|---|
# {rows}
#
# The ranks a micro-batch's forward passes: {path}.

# %% [text] zbv-path
# ~~ zh fdb7ee55
# 一个 micro-batch 经过 {chunks} 个 chunk，rank 序列先升后降（V 形）；rank {last} 连续算两个 chunk，中间不需要点对点传输。
# ~~ en a89f8d54
# A micro-batch passes {chunks} chunks, and its sequence of ranks first rises, then falls (a V); rank {last} runs two chunks in a row with no point-to-point transfer between them.

# %% [text] zbv-chunk-cost
# ~~ zh 6add81fe
# 每个 chunk 是半个 stage：代价取 $F=B=W={x:g}$ 时，一个 chunk 的 F、B、W 各是 {half:g}。
# ~~ en 69d2e699
# Each chunk is half a stage: with $F=B=W={x:g}$, a chunk's F, B and W each take {half:g}.

# %%
p, m = 4, 8
costs = Costs(f=1, b=1, w=1)          # the zero-bubble setting F = B = W (one rank's share)
zbv = build("zbv", p, m)
owner = zbv.rank_of_stage()
path = [owner[s] for s in zbv.routes[0]]
md(text("zbv-placement", rows="\n".join(f"| {r} | {list(chunks)} |" for r, chunks in enumerate(zbv.placement)),
        path=" → ".join(map(str, path))))
v_shape = path == list(range(p)) + list(range(p - 1, -1, -1))
md(claim(v_shape, text("zbv-path", chunks=zbv.chunks, last=p - 1), path=path)
   + " " + text("zbv-chunk-cost", x=costs.f, half=costs.f / 2))

# %% [text] zbv-result
# ~~ zh a22176ed
# $p={p}, m={m}$：ZB-V 的 makespan **{makespan:g}**，每个 rank 窗口内的空闲 {idle}，激活峰值 {peaks}。对比 ZB-H1（makespan {h1:g}，峰值 {h1_peak:g}）和 ZB-H2（makespan {h2:g}，峰值 {h2_peak:g}）：
# ~~ en 4232b46c
# $p={p}, m={m}$: ZB-V's makespan is **{makespan:g}**, the idle time inside each rank's window {idle}, and the activation peaks {peaks}. Compare ZB-H1 (makespan {h1:g}, peak {h1_peak:g}) and ZB-H2 (makespan {h2:g}, peak {h2_peak:g}):

# %% [text] zbv-zero
# ~~ zh c72c02fb
# ZB-V 用 1F1B 的显存做到了零空闲，而且 makespan 等于它的下界 $m(F+B+W) + (p-1)F/2 = {bound:g}$：最后一个 rank 至少要等 $p-1$ 个半 stage 的前向才有活干。这不只是这一组数：在 {checked_zero} 个点上（$p$ 取 2..8，$m$ 取 $2p$..$2p+12$，$F=B=W$ 取 0.5..2）都是零空闲、正好等于下界；$m < 2p$ 时就不再零空闲。显存一侧更宽：在 {checked_peak} 个点上（$p$ 取 2..8，$m$ 取 $p$..$p+12$，F、B、W 各取 0.5..2，`w_mem` 取 0..1），没有一个 rank 的峰值超过 $p$。
# ~~ en 2d607eed
# ZB-V reaches zero idle time on 1F1B's memory, and its makespan equals its lower bound $m(F+B+W) + (p-1)F/2 = {bound:g}$: the last rank has nothing to do until $p-1$ half-stage forwards have passed. This is not just one setting: at {checked_zero} points ($p$ from 2 to 8, $m$ from $2p$ to $2p+12$, $F=B=W$ from 0.5 to 2) the idle time is zero and the makespan exactly the bound; below $m = 2p$ the idle time is no longer zero. The memory side holds more widely: at {checked_peak} points ($p$ from 2 to 8, $m$ from $p$ to $p+12$, F, B and W each from 0.5 to 2, `w_mem` from 0 to 1) no rank ever peaks above $p$.

# %%
tl_zbv = simulate(zbv, costs)
tl_h1 = simulate(build("zb-h1", p, m), costs)
tl_h2 = simulate(build("zb-h2", p, m), costs)
plots.compare([tl_h1, tl_zbv], memory_too=True)
figure.show()
bound = formulas.predict("zbv", p, m, costs).makespan


def zbv_zero_rule(p, extra, x):
    """F = B = W and m >= 2p: ZB-V idles nowhere inside a rank's window and meets its lower bound."""
    m = 2 * p + extra
    tl = compiled("zbv", p, m).simulate(Costs(f=x, b=x, w=x))
    return max(tl.idle) < EPS and close(tl.makespan, m * 3 * x + (p - 1) * x / 2)


def zbv_peak_rule(p, extra, f, b, w, w_mem):
    """ZB-V never holds more than p micro-batches (1F1B's rank 0) on any rank."""
    return max(compiled("zbv", p, p + extra).simulate(Costs(f=f, b=b, w=w, w_mem=w_mem)).peak_activations) <= p + EPS


zbv_zero = sweep(zbv_zero_rule, {"p": (2, 8), "extra": (0, 12), "x": (0.5, 2.0)}, n=40, seed=1)
zbv_peak = sweep(zbv_peak_rule, {"p": (2, 8), "extra": (0, 12), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.5, 2.0),
                                 "w_mem": (0.0, 1.0)}, n=40, seed=2)
md(text("zbv-result", p=p, m=m, makespan=tl_zbv.makespan, idle=rounded(tl_zbv.idle), peaks=rounded(tl_zbv.peak_activations),
        h1=tl_h1.makespan, h1_peak=max(tl_h1.peak_activations), h2=tl_h2.makespan, h2_peak=max(tl_h2.peak_activations))
   + " " + claim(zbv_zero.holds and zbv_peak.holds and max(tl_zbv.peak_activations) <= p
                 and close(tl_zbv.makespan, bound) and max(tl_zbv.idle) < EPS,
                 text("zbv-zero", bound=bound, checked_zero=zbv_zero.checked, checked_peak=zbv_peak.checked),
                 peaks=tl_zbv.peak_activations, **zbv_zero.figures(), **{f"peak_{k}": v for k, v in zbv_peak.figures().items()}))

# %% [markdown] v-family
# ~~ zh d038b175
# 同样的 V 形放置也是第 5 章 §6 里 V-Min、V-Half、V-ZB（Qi 等人 2024 的可控显存论文）用的放置：那里用 building block 的 lifespan 推出它们各用 1F1B 激活显存的约 1/3、1/2 和 1 倍，见[第 5 章](05_zero_bubble.ipynb)。本章不再重复，只用 ZB-V 作为 V 形放置的代表。
#
# PyTorch 的 `ScheduleZBVZeroBubble` 实现的也是 ZB-V。把它排出的顺序翻译成 `Plan`（`course.torch_bridge`，不建进程组）对照一下：
# ~~ en d9413ef1
# The same V placement is the one chapter 5 §6 used for V-Min, V-Half and V-ZB (Qi et al., *Pipeline Parallelism with Controllable Memory*, 2024): there the lifespans of their building blocks showed they use about 1/3, 1/2 and 1 times 1F1B's activation memory, see [chapter 5](05_zero_bubble.ipynb). This chapter does not repeat that and uses ZB-V as its example of the V placement.
#
# PyTorch's `ScheduleZBVZeroBubble` implements ZB-V too. Translate the order it produces into a `Plan` (`course.torch_bridge`, no process group needed) and compare:

# %%
from course import recordings

# recordings.run("torch-zbv-order") is course.torch_bridge.torch_plan("ScheduleZBVZeroBubble", 4, 8), torch's order
# as a Plan: computed live where torch is installed, the recorded one without torch (the browser edition).
theirs = recordings.run("torch-zbv-order")
assert (theirs.p, theirs.m) == (p, m)

# %% [text] torch-same
# ~~ zh bb3d91ed
# $p={p}, m={m}$：torch 的 ZB-V 顺序与本库的 `zbv` 逐个算子完全相同；同样的代价下模拟的 makespan 分别是 {theirs:g} 和 {ours:g}。
# ~~ en 3059822a
# $p={p}, m={m}$: torch's ZB-V order and this course's `zbv` agree op for op; under the same costs the simulated makespans are {theirs:g} and {ours:g}.

# %%
same_order = theirs.format() == zbv.format() and theirs.placement == zbv.placement
md(claim(same_order, text("torch-same", p=p, m=m, theirs=simulate(theirs, costs).makespan, ours=tl_zbv.makespan),
         theirs=theirs.format(), ours=zbv.format()))

# %% [markdown] dualpipe
# ~~ zh 8b4aa1bb
# ## 2. DualPipe：两端同时进
#
# 两端同时进的想法来自 Chimera（Li & Hoefler, 2021）：两条方向相反的流水线共用同一组设备，每个设备存两份模型的各一段。
# DualPipe 有两条路线。本库把副本 A 的 stage 记为 $0..p-1$，副本 B 的记为 $p..2p-1$：
# ~~ en 70914010
# ## 2. DualPipe: entering from both ends
#
# Entering from both ends comes from Chimera (Li & Hoefler, 2021): two pipelines in opposite directions share one set of devices, and every device holds a piece of each of two model copies.
# DualPipe has two routes. This course numbers copy A's stages $0..p-1$ and copy B's $p..2p-1$:

# %% [text] dualpipe-routes
# ~~ zh 418e1beb
# | micro-batch | 经过的 stage | 所在的 rank |
# |---|---|---|
# {rows}
#
# 一半 micro-batch 从 rank 0 进入，另一半从 rank {last} 进入。每个 rank 持有两个完整 stage（各为模型的 $1/p$），参数是 1F1B 的 {params:g} 倍（`formulas.parameters_per_rank`）。
# ~~ en 4079ba08
# | micro-batches | stages passed | on ranks |
# |---|---|---|
# {rows}
#
# Half of the micro-batches enter at rank 0, the other half at rank {last}. Every rank holds two whole stages (each $1/p$ of the model), {params:g} times 1F1B's parameters (`formulas.parameters_per_rank`).

# %%
m = 4 * p                             # a longer run, so the steady F&B phase shows
dual = build("dualpipe", p, m)
owner = dual.rank_of_stage()
route_rows = []
for route in sorted({tuple(r) for r in dual.routes}):
    users = [i for i, r in enumerate(dual.routes) if tuple(r) == route]
    route_rows.append(f"| {users[0]}..{users[-1]} | {list(route)} | {[owner[s] for s in route]} |")
params = formulas.parameters_per_rank(dual)
md(text("dualpipe-routes", rows="\n".join(route_rows), last=p - 1, params=params[0]))

# %% [text] dualpipe-result
# ~~ zh 1d26d187
# DualPipe（$p={p}, m={m}$，重叠系数 `overlap` = {overlap:g}，即 F&B 的时长等于 F 加 B）：makespan **{makespan:g}**，窗口内空闲 {idle}，激活峰值 {peaks}。
# ~~ en 15399a8a
# DualPipe ($p={p}, m={m}$, overlap coefficient `overlap` = {overlap:g}, so an F&B lasts as long as F plus B): makespan **{makespan:g}**, idle time inside the windows {idle}, activation peaks {peaks}.

# %% [text] dualpipe-peak
# ~~ zh afa0370f
# 峰值是 $p+1 = {cap}$，而且不随代价变：在 {checked} 个点上（偶数 $p$ 取 2..8，偶数 $m$ 取 $2p$..$2p+12$，F、B 各取 0.5..2，W 取 0..2，`overlap` 取 0.5..1）DualPipe 的峰值都正好是 $p+1$。紫色的块是 F&B：一个方向的前向和另一个方向的反向配成一对。
# ~~ en d904eee1
# The peak is $p+1 = {cap}$, whatever the costs: at {checked} points (even $p$ from 2 to 8, even $m$ from $2p$ to $2p+12$, F and B each from 0.5 to 2, W from 0 to 2, `overlap` from 0.5 to 1) DualPipe's peak is exactly $p+1$. The purple blocks are F&B: the forward of one direction paired with the backward of the other.

# %%
tl_dual = simulate(dual, costs)
plots.compare([tl_dual], memory_too=True)
figure.show()


def dualpipe_peak_rule(half_p, k, f, b, w, overlap):
    """DualPipe (even p, even m >= 2p) peaks at exactly p + 1 micro-batches, whatever the costs."""
    p, m = 2 * half_p, 4 * half_p + 2 * k
    tl = compiled("dualpipe", p, m).simulate(Costs(f=f, b=b, w=w, overlap=overlap))
    return close(max(tl.peak_activations), p + 1)


dual_peak = sweep(dualpipe_peak_rule, {"half_p": (1, 4), "k": (0, 6), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.0, 2.0),
                                       "overlap": (0.5, 1.0)}, n=40, seed=3)
md(text("dualpipe-result", p=p, m=m, overlap=costs.overlap, makespan=tl_dual.makespan, idle=rounded(tl_dual.idle),
        peaks=rounded(tl_dual.peak_activations))
   + " " + claim(dual_peak.holds and max(tl_dual.peak_activations) == p + 1,
                 text("dualpipe-peak", cap=p + 1, checked=dual_peak.checked),
                 peaks=tl_dual.peak_activations, **dual_peak.figures()))

# %% [markdown] phases
# ~~ zh e5e1acaf
# ### DualPipe 的八个阶段
#
# 每个 rank 的顺序由同一段八个阶段的代码生成（`course.schedules.dualpipe.dualpipe_phases`，阶段的名字取自 DeepSeek
# `dualpipe.py` 的注释；"0"、"1" 是 rank 的两个 chunk，0 是先收到新 micro-batch 的那个）。下面给每一步标上它所属的阶段：
# ~~ en 06e8545c
# ### DualPipe's eight phases
#
# Every rank's order comes from the same eight-phase code (`course.schedules.dualpipe.dualpipe_phases`; the phase names are those of the comments in DeepSeek's
# `dualpipe.py`, where "0" and "1" are a rank's two chunks, 0 being the one that receives new micro-batches first). The figure colours each step by its phase:

# %% [text] main-phase
# ~~ zh ee344562
# 每个 rank 在主阶段（4）的步数是 {main_phase}：中间的 rank 主阶段最长，两端最短，左右对称。两个方向的 micro-batch 在中间相遇，那里的 rank 最早两个方向都有活干、最早开始配对；两端的 rank 要等对面进来的 micro-batch 走完整条流水线。这个形状在 {checked} 个点上（偶数 $p$ 取 2..12，偶数 $m$ 取 $2p$..$2p+20$）都成立。
# ~~ en 5b3567b8
# Each rank's number of steps in the main phase (4) is {main_phase}: longest in the middle, shortest at the ends, symmetric. The two directions' micro-batches meet in the middle, so the middle ranks are the first to have work from both directions and the first to pair; the ranks at the ends wait until micro-batches from the far end have crossed the whole pipeline. The shape holds at {checked} points (even $p$ from 2 to 12, even $m$ from $2p$ to $2p+20$).

# %%
from course.schedules.dualpipe import dualpipe_phases

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


def draw_phases(ax, name, p, m, costs):
    """Each step of the simulated plan as a bar on its rank's row, coloured by the phase it belongs to."""
    tl = simulate(build(name, p, m), costs)
    colors = figure.TAB10
    for r, (spans, phases) in enumerate(zip(tl.spans, phase_of_steps(name, p, m))):
        assert len(spans) == len(phases)
        ax.broken_barh([(sp.start, sp.end - sp.start) for sp in spans], (r - 0.4, 0.8),
                       facecolors=[colors[k] for k in phases], edgecolor="white", linewidth=0.3)
    ax.set_yticks(range(p), [f"rank {r}" for r in range(p)])
    ax.invert_yaxis()
    ax.set_xlabel("time (cost units)")
    ax.set_title(f"{name}, p={p}, m={m}: each step coloured by its phase")
    ax.legend(handles=[figure.Patch(color=colors[k], label=PHASES[k]) for k in range(8)], fontsize=7,
              loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


fig, ax = figure.subplots(figsize=(12, 3.2))
draw_phases(ax, "dualpipe", p, m, costs)
figure.show()


def main_phase_steps(p, m):
    return [sum(1 for k in ph if k == 3) for ph in phase_of_steps("dualpipe", p, m)]


def main_phase_rule(half_p, k):
    """The main phase is longest on the middle ranks, shortest at the ends, and symmetric."""
    p = 2 * half_p
    steps = main_phase_steps(p, 2 * p + 2 * k)
    return steps[0] == min(steps) and steps[p // 2] == max(steps) and steps == steps[::-1]


main_phase = main_phase_steps(p, m)
main_sweep = sweep(main_phase_rule, {"half_p": (1, 6), "k": (0, 10)}, n=20, seed=4)
md(claim(main_sweep.holds and main_phase_rule(p // 2, (m - 2 * p) // 2) and main_phase[0] < main_phase[p // 2],
         text("main-phase", main_phase=main_phase, checked=main_sweep.checked),
         main_phase=main_phase, **main_sweep.figures()))

# %% [markdown] overlap
# ~~ zh db468092
# ## 3. F&B 重叠：把通信藏起来
#
# DualPipe 的动机是专家并行（EP）：每个 MoE 层的前向和反向都有两次跨节点的 all-to-all（dispatch、combine），
# 通信时间和计算相当。模拟器里 F&B 一对的时长是 `overlap` $\times (F+B)$；这个系数从哪来，要看一对里面发生了什么。
#
# 一个 MoE block 的前向 chunk 是一条链：attention（计算）→ dispatch（all-to-all）→ 专家 MLP（计算）→ combine（all-to-all）。
# 反向 chunk 倒过来：combine 的反向（all-to-all）→ MLP 反向（计算，约为前向的 2 倍）→ dispatch 的反向（all-to-all）→
# attention 反向（计算）。单独跑一个 chunk，all-to-all 期间 GPU 的计算单元空着。配成一对以后，GPU 上有两条流：计算流和通信流，
# 每一小段等它那条链上的前一段做完、并且它那条流空出来就开始（`course.overlap.pair_schedule`）。
# ~~ en 64d13323
# ## 3. F&B overlap: hiding the communication
#
# DualPipe's motivation is expert parallelism (EP): every MoE layer's forward and backward contain two all-to-alls across nodes (dispatch and combine),
# taking about as long as the computation. In the simulator an F&B pair lasts `overlap` $\times (F+B)$; where that coefficient comes from depends on what happens inside a pair.
#
# A MoE block's forward chunk is a chain: attention (compute) → dispatch (all-to-all) → expert MLP (compute) → combine (all-to-all).
# The backward chunk runs it in reverse: combine's backward (all-to-all) → the MLP's backward (compute, about twice the forward) → dispatch's backward (all-to-all) →
# attention's backward (compute). Run alone, a chunk leaves the GPU's compute units idle during each all-to-all. Paired, the GPU has two streams, a compute stream and a communication stream,
# and each sub-step starts as soon as the previous sub-step of its chain is done and its stream is free (`course.overlap.pair_schedule`).

# %% [markdown] predict-overlap
# ~~ zh 8b53fb58
# **预测：** 设 attention、MLP 的前向各 1 个单位，dispatch、combine 也各 1 个单位（通信和计算一样长），反向的计算是前向的 2 倍。
# 一对 F&B 的时长是两个 chunk 串行的几倍（即 `overlap`）？
# ~~ en d82d10f9
# **Predict:** let attention's and the MLP's forwards take 1 unit each, and dispatch and combine 1 unit each too (communication as long as computation), with the backward's computation twice the forward's.
# How long is one F&B pair, as a fraction of the two chunks run one after the other (that is, `overlap`)?

# %%
guess_overlap = None    # a number between 0 and 1

# %%
from course.overlap import COMM, COMPUTE, block_chunks, overlap_coefficient, pair_schedule


def draw_pair(ax, pair):
    """One F&B pair's sub-steps on the compute and the communication stream."""
    for s in pair:
        y = 0 if s.stream == COMPUTE else 1
        ax.broken_barh([(s.start, s.end - s.start)], (y - 0.35, 0.7),
                       facecolors="#4C72B0" if s.chunk == "F" else "#C44E52", edgecolor="white")
        ax.text((s.start + s.end) / 2, y, f"{s.chunk} {s.name}", ha="center", va="center", fontsize=7, color="white")
    ax.set_yticks([0, 1], [COMPUTE, COMM])
    ax.invert_yaxis()
    ax.set_xlabel("time")
    ax.set_title("one F&B pair on two streams (blue: forward chunk, red: backward chunk)")


def stream_totals(chunks):
    """(C, K): the computation and the communication in one F&B pair."""
    steps = [(stream, d) for chain in chunks.values() for _, stream, d in chain]
    return sum(d for s, d in steps if s == COMPUTE), sum(d for s, d in steps if s == COMM)


one_to_one = block_chunks(attention=1, mlp=1, dispatch=1, combine=1)
pair = pair_schedule(one_to_one)
fig, ax = figure.subplots(figsize=(9, 1.8))
draw_pair(ax, pair)
figure.show()
compute_total, comm_total = stream_totals(one_to_one)
ov_1 = overlap_coefficient(one_to_one)

# %% [text] reveal-overlap
# ~~ zh 1667a853
# 两个 chunk 串行要 {serial:g}（计算 {compute:g}，通信 {comm:g}），配对后 {paired:g}。通信全部落在另一个 chunk 的计算下面，一对的长度就是较长的那条流：`overlap` $= \max(C, K)/(C+K)$，$C$、$K$ 是一对里的计算和通信总量。这个等式在 {checked_eq} 个点上都成立：attention 和 MLP 一样长（0.5..2），每次 all-to-all 不超过它们（是它们的 0..1 倍）。更一般时它只是下界：在 {checked_ge} 个点上（四段各取 0.5..2，all-to-all 取 0..2）一对从不短于 $\max(C, K)$，但 all-to-all 比计算长、或者各段长短不一时，两条链的先后次序会留下空隙，一对更长。
# ~~ en 1cef601b
# Run one after the other, the two chunks take {serial:g} (computation {compute:g}, communication {comm:g}); paired they take {paired:g}. All the communication lands under the other chunk's computation, so the pair is as long as its longer stream: `overlap` $= \max(C, K)/(C+K)$, with $C$ and $K$ the pair's total computation and communication. The equality holds at all {checked_eq} points where attention and the MLP take the same time (0.5 to 2) and no all-to-all is longer than they are (0 to 1 times them). More generally it is only a lower bound: at {checked_ge} points (each sub-step from 0.5 to 2, each all-to-all from 0 to 2) a pair is never shorter than $\max(C, K)$, but when an all-to-all is longer than the computation, or the sub-steps differ, the order of the two chains leaves gaps and the pair takes longer.

# %%
def overlap_equality_rule(compute, share):
    """Equal attention and MLP, all-to-alls no longer than them: the pair lasts max(C, K) exactly."""
    chunks = block_chunks(attention=compute, mlp=compute, dispatch=share * compute, combine=share * compute)
    c, k = stream_totals(chunks)
    return close(overlap_coefficient(chunks), max(c, k) / (c + k))


def overlap_bound_rule(attention, mlp, dispatch, combine):
    """Any sub-step lengths: a pair is never shorter than its longer stream."""
    chunks = block_chunks(attention=attention, mlp=mlp, dispatch=dispatch, combine=combine)
    c, k = stream_totals(chunks)
    return overlap_coefficient(chunks) >= max(c, k) / (c + k) - EPS


ov_equal = sweep(overlap_equality_rule, {"compute": (0.5, 2.0), "share": (0.0, 1.0)}, n=60, seed=5)
ov_bound = sweep(overlap_bound_rule, {"attention": (0.5, 2.0), "mlp": (0.5, 2.0), "dispatch": (0.0, 2.0),
                                      "combine": (0.0, 2.0)}, n=60, seed=6)
md(reveal(guess_overlap, round(ov_1, 4),
          claim(ov_equal.holds and ov_bound.holds and close(ov_1, max(compute_total, comm_total) / (compute_total + comm_total)),
                text("reveal-overlap", serial=compute_total + comm_total, compute=compute_total, comm=comm_total,
                     paired=max(s.end for s in pair), checked_eq=ov_equal.checked, checked_ge=ov_bound.checked),
                ov=ov_1, **ov_equal.figures(), **{f"bound_{k}": v for k, v in ov_bound.figures().items()})))

# %% [markdown] overlap-table
# ~~ zh f1b7623b
# 通信占比变化时，`overlap` 怎样变？DeepSeek-V3 还把 132 个 SM 里的 20 个留给通信内核，计算只用剩下的，慢
# $132/112$ 倍；下表两列都算。再把推出来的系数交给模拟器：
# ~~ en fa3fddf6
# How does `overlap` change with the share of communication? DeepSeek-V3 also reserves 20 of its GPUs' 132 SMs for communication kernels, so computation runs on the rest,
# $132/112$ times slower; the table computes both columns. Then the simulator takes the derived coefficient:

# %% [text] overlap-table-head
# ~~ zh c5b971e2
# $p={p}, m={m}$, $F=B=W=1$：
#
# | all-to-all / 计算 | overlap | overlap（132 个 SM 里 20 个留给通信） | DualPipe makespan | DualPipeV makespan | ZB-V makespan |
# |---|---|---|---|---|---|
# ~~ en 7b2e0dda
# $p={p}, m={m}$, $F=B=W=1$:
#
# | all-to-all / compute | overlap | overlap, 20 of 132 SMs for comm | DualPipe makespan | DualPipeV makespan | ZB-V makespan |
# |---|---|---|---|---|---|

# %% [text] overlap-falls
# ~~ zh 549b1edb
# ZB-V 没有 F&B 步，不受 `overlap` 影响；DualPipe 和 DualPipeV 的 makespan 随通信占比、也就是随 `overlap` 下降。这不是这几行的巧合：在 {checked} 个点上（偶数 $p$ 取 2..8，偶数 $m$ 取 $2p$..$2p+12$，F、B 各取 0.5..2，W 取 0..2，两个 `overlap` 取 0.5..1），较小的 `overlap` 总是让两者都严格变短。这正是 DualPipe 的卖点：在通信很重的 MoE 训练里，bubble 之外还有一大块时间可以靠重叠拿回来。反过来，没有通信可藏时（比值 0）配对不省任何时间，留给通信的 SM 还让计算变慢。
# ~~ en ddf3bda5
# ZB-V has no F&B steps, so `overlap` leaves it unchanged; DualPipe's and DualPipeV's makespans fall as the share of communication, that is `overlap`, falls. That is no accident of these rows: at {checked} points (even $p$ from 2 to 8, even $m$ from $2p$ to $2p+12$, F and B each from 0.5 to 2, W from 0 to 2, two values of `overlap` from 0.5 to 1) the smaller `overlap` always makes both strictly shorter. This is DualPipe's selling point: in communication-heavy MoE training, a large slice of time beyond the bubble can be won back by overlapping. Conversely, with no communication to hide (ratio 0) pairing saves nothing, and the SMs reserved for communication even slow the computation down.

# %%
rows = []
derived = {}
for ratio in (0.0, 0.25, 0.5, 1.0):
    chunks = block_chunks(attention=1, mlp=1, dispatch=ratio, combine=ratio)
    ov = overlap_coefficient(chunks)
    c = Costs(f=1, b=1, w=1, overlap=ov)
    spans = {name: simulate(build(name, p, m), c).makespan for name in ("dualpipe", "dualpipev", "zbv")}
    derived[ratio] = (ov, spans)
    rows.append(f"| {ratio:g} | {ov:.3g} | {overlap_coefficient(chunks, sm_share=20 / 132):.3g} | "
                + " | ".join(f"{spans[k]:.4g}" for k in ("dualpipe", "dualpipev", "zbv")) + " |")
md(text("overlap-table-head", p=p, m=m) + "\n" + "\n".join(rows))
zbv_flat = len({round(s["zbv"], 9) for _, s in derived.values()}) == 1
dual_falls = all(a[1]["dualpipe"] > b[1]["dualpipe"] and a[1]["dualpipev"] > b[1]["dualpipev"]
                 for a, b in zip(list(derived.values()), list(derived.values())[1:]))


def overlap_helps_rule(half_p, k, f, b, w, ov_a, ov_b):
    """A smaller overlap makes DualPipe and DualPipeV strictly shorter."""
    p, m = 2 * half_p, 4 * half_p + 2 * k
    lo, hi = sorted((ov_a, ov_b))
    if hi - lo < 1e-3:
        return True
    return all(compiled(name, p, m).simulate(Costs(f=f, b=b, w=w, overlap=lo)).makespan
               < compiled(name, p, m).simulate(Costs(f=f, b=b, w=w, overlap=hi)).makespan - EPS
               for name in ("dualpipe", "dualpipev"))


helps = sweep(overlap_helps_rule, {"half_p": (1, 4), "k": (0, 6), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.0, 2.0),
                                   "ov_a": (0.5, 1.0), "ov_b": (0.5, 1.0)}, n=40, seed=7)
md(claim(zbv_flat and dual_falls and helps.holds, text("overlap-falls", checked=helps.checked),
         derived=derived, **helps.figures()))

# %% [markdown] pairing
# ~~ zh 6ec7cec4
# ### 配对需要双向吗？
#
# 1F1B 的稳定阶段里，每个 rank 本来就交替做两个不同 micro-batch 的 F 和 B，看上去直接把它们配成一对就行。下面把单向的
# 1F1B 改成配对的版本：rank $r$ 先做 $w_r$ 个前向，然后每一步是一对 $F_{j+w_r}$&$B_j$，最后做完剩下的反向。
# ~~ en 27fcd23c
# ### Does pairing need two directions?
#
# In 1F1B's steady state every rank already alternates the F and the B of two different micro-batches, so it looks as if we could simply pair them. Below, one-directional
# 1F1B becomes a paired version: rank $r$ first runs $w_r$ forwards, then every step is a pair $F_{j+w_r}$&$B_j$, and at the end it runs the backwards left over.

# %% [markdown] predict-pairing
# ~~ zh c607c2e1
# **预测：** 预热照 1F1B 做（$w_r = p - r$，比 1F1B 多一个），`overlap` = 0.7 时，配对版的 makespan 比不配对的 1F1B 长还是短？
# 写 `"longer"` 或 `"shorter"`。
# ~~ en 0234a101
# **Predict:** with 1F1B's warm-up ($w_r = p - r$, one more than 1F1B's) and `overlap` = 0.7, is the paired version's makespan longer or shorter than unpaired 1F1B's?
# Write `"longer"` or `"shorter"`.

# %%
guess_pairing = None    # "longer" or "shorter"

# %% [text] pairing-table
# ~~ zh 2f0779e4
# $p={p}$, $m={m}$, $F=B=1$, $W=0$, `overlap` = {overlap:g}：
#
# | 计划 | makespan | 激活峰值（1F1B 单位） |
# |---|---|---|
# | 1F1B，不配对 | {plain:.4g} | {plain_peaks} |
# | 1F1B 配对，预热 $p-r$ | {shallow:.4g} | {shallow_peaks} |
# | 1F1B 配对，预热 $1+2(p-1-r)$ | {deep:.4g} | {deep_peaks} |
# | DualPipeV（一条路线，折成 V） | {folded:.4g} | {folded_peaks} |
# ~~ en 0bf2f002
# $p={p}$, $m={m}$, $F=B=1$, $W=0$, `overlap` = {overlap:g}:
#
# | plan | makespan | activation peaks (1F1B units) |
# |---|---|---|
# | 1F1B, no pairs | {plain:.4g} | {plain_peaks} |
# | 1F1B pairs, warm-up $p-r$ | {shallow:.4g} | {shallow_peaks} |
# | 1F1B pairs, warm-up $1+2(p-1-r)$ | {deep:.4g} | {deep_peaks} |
# | DualPipeV (one route, folded into a V) | {folded:.4g} | {folded_peaks} |

# %%
from course.plan import Op, Overlap, Plan


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


def shallow(p):
    return lambda r: p - r


def deep(p):
    return lambda r: 1 + 2 * (p - 1 - r)


m_pair = 2 * p
pair_costs = Costs(f=1, b=1, w=0, overlap=0.7)
plain_1f1b = simulate(build("1f1b", p, m_pair), pair_costs)
shallow_tl = simulate(paired_1f1b(p, m_pair, shallow(p)), pair_costs)
deep_tl = simulate(paired_1f1b(p, m_pair, deep(p)), pair_costs)
folded = simulate(build("dualpipev", p, m_pair), pair_costs)
md(text("pairing-table", p=p, m=m_pair, overlap=pair_costs.overlap,
        plain=plain_1f1b.makespan, plain_peaks=rounded(plain_1f1b.peak_activations),
        shallow=shallow_tl.makespan, shallow_peaks=rounded(shallow_tl.peak_activations),
        deep=deep_tl.makespan, deep_peaks=rounded(deep_tl.peak_activations),
        folded=folded.makespan, folded_peaks=rounded(folded.peak_activations)))

# %% [text] reveal-pairing
# ~~ zh 980e8f1a
# 照 1F1B 的预热配对反而更慢（{shallow:.4g} 对 {plain:.4g}）：一对里的 F 要发给下一个 rank，B 要发给上一个 rank，而下一个 rank 的那一对又在等这个 B 的梯度，于是每一棒都要等相邻 rank 的整对做完。把预热加深到 $1+2(p-1-r)$，每个 rank 手里多两个 micro-batch，配对就不再拖慢：makespan {deep:.4g}，和 DualPipeV 的 {folded:.4g} 差不多。代价是激活峰值 {deep_peak:g}，DualPipeV 只要 {folded_peak:g}。这几条都不只是这一组数：在 {checked} 个点上（$p$ 取 2..8，$m$ 取 $2p$、$3p$ 或 $4p$，F、B 各取 0.5..2，$W=0$，`overlap` 取 0.65..1），浅预热的配对总是比 1F1B 慢，深预热的峰值总是 $2p$、DualPipeV 的总是 $p+1/2$，两者在 `overlap` < 1 时都比 1F1B 快，深预热的 makespan 落在 DualPipeV 的 {low:.2f} 到 {high:.2f} 倍之间。（`overlap` 更小时，一对越来越接近单个 F 加 B 的一半长，浅预热就不一定慢了：$p=2$、$m=4$、`overlap` = 0.6 时两者一样长。）所以配对并不需要双向；双向（或 V 形折返）换来的是一对里 F 和 B 的数据流向同一个邻居，在 1F1B 量级的显存下就能配对，而且把灌满和排空减半（公式里的 $PP/2$）。
# ~~ en 5fbc60c8
# Pairing with 1F1B's warm-up is slower ({shallow:.4g} against {plain:.4g}): a pair's F goes to the next rank and its B to the previous one, while the next rank's pair is waiting for this B's gradient, so every hand-over waits for a neighbour's whole pair. Deepen the warm-up to $1+2(p-1-r)$, two more micro-batches in hand per rank, and pairing stops slowing things down: makespan {deep:.4g}, about DualPipeV's {folded:.4g}. The price is an activation peak of {deep_peak:g}, where DualPipeV needs {folded_peak:g}. None of this is just one setting: at {checked} points ($p$ from 2 to 8, $m$ of $2p$, $3p$ or $4p$, F and B each from 0.5 to 2, $W=0$, `overlap` from 0.65 to 1) shallow pairing is always slower than 1F1B, the deep warm-up always peaks at $2p$ and DualPipeV at $p+1/2$, both beat 1F1B whenever `overlap` < 1, and the deep warm-up's makespan lies between {low:.2f} and {high:.2f} times DualPipeV's. (With a smaller `overlap` a pair comes closer to half of a single F plus B, and shallow pairing need not be slower: at $p=2$, $m=4$ and `overlap` = 0.6 the two take equally long.) So pairing does not need two directions; what two directions (or the V's turn) buy is that a pair's F and B data go to the same neighbour, so pairing works at 1F1B-sized memory, and the fill and the drain are halved (the $PP/2$ in the formula).

# %%
_paired = {}


def paired_plan(p, m, depth):
    if (p, m, depth) not in _paired:
        _paired[p, m, depth] = CompiledPlan(paired_1f1b(p, m, (shallow if depth == "shallow" else deep)(p)))
    return _paired[p, m, depth]


deep_vs_folded = []


def pairing_rule(p, j, f, b, overlap):
    """Shallow pairing is slower than 1F1B; the deep warm-up peaks at 2p and DualPipeV at p + 1/2, both faster."""
    m = j * p
    c = Costs(f=f, b=b, w=0, overlap=overlap)
    base = compiled("1f1b", p, m).simulate(c).makespan
    sh, dp = paired_plan(p, m, "shallow").simulate(c), paired_plan(p, m, "deep").simulate(c)
    fo = compiled("dualpipev", p, m).simulate(c)
    deep_vs_folded.append(dp.makespan / fo.makespan)
    faster = overlap >= 1 - EPS or (dp.makespan < base - EPS and fo.makespan < base - EPS)
    return (sh.makespan > base + EPS and faster and close(max(dp.peak_activations), 2 * p)
            and close(max(fo.peak_activations), p + 0.5))


pairing = sweep(pairing_rule, {"p": (2, 8), "j": (2, 4), "f": (0.5, 2.0), "b": (0.5, 2.0), "overlap": (0.65, 1.0)},
                n=40, seed=8)
md(reveal(guess_pairing, "longer" if shallow_tl.makespan > plain_1f1b.makespan else "shorter",
          claim(pairing.holds and shallow_tl.makespan > plain_1f1b.makespan and deep_tl.makespan < plain_1f1b.makespan
                and max(deep_tl.peak_activations) > max(folded.peak_activations),
                text("reveal-pairing", shallow=shallow_tl.makespan, plain=plain_1f1b.makespan, deep=deep_tl.makespan,
                     folded=folded.makespan, deep_peak=max(deep_tl.peak_activations),
                     folded_peak=max(folded.peak_activations), checked=pairing.checked,
                     low=min(deep_vs_folded), high=max(deep_vs_folded)),
                shallow=shallow_tl.makespan, plain=plain_1f1b.makespan, deep=deep_tl.makespan, folded=folded.makespan,
                **pairing.figures())))

# %% [markdown] dualpipev
# ~~ zh 9c5ac414
# ## 4. DualPipeV：折成 V，省掉一份参数
#
# DualPipeV 把 DualPipe 的顺序套在 V 形放置上：只有一条路线，$2p$ 个半 stage 的 chunk，rank $r$ 持有第 $r$ 和第 $2p-1-r$ 个。
# 它就是 $2p$ 个 rank 上的 DualPipe 对折以后的样子：怎么折（要哪些 rank、stage 和 micro-batch 怎么重新编号）是练习 `dualpipev-from-dualpipe`。
# ~~ en f7c1e974
# ## 4. DualPipeV: fold into a V, drop a copy of the parameters
#
# DualPipeV lays DualPipe's order onto the V placement: a single route, $2p$ chunks of half a stage, rank $r$ holding chunks $r$ and $2p-1-r$.
# It is a DualPipe on $2p$ ranks folded in half; how to fold it (which ranks to keep, how to renumber stages and micro-batches) is the exercise `dualpipev-from-dualpipe`.

# %% [text] dualpipev-result
# ~~ zh 42553a1f
# DualPipeV（$p={p}, m={m}$）：参数 {params:g} 倍（DualPipe 是 {dual_params:g} 倍），makespan **{makespan:g}**，窗口内空闲 {idle}，激活峰值 {peaks} 份 1F1B 单位，即 {chunks:g} 个半 stage 的 chunk（$PP+1$，$PP = 2p = {pp}$）。峰值 $p + 1/2$ 在 {checked} 个点上（$p$ 取 1..8，$m$ 取 $2p$..$2p+12$，F、B 各取 0.5..2，W 取 0..2，`overlap` 取 0.5..1）都成立。
# ~~ en fc5a0e12
# DualPipeV ($p={p}, m={m}$): {params:g} times the parameters (DualPipe: {dual_params:g} times), makespan **{makespan:g}**, idle time inside the windows {idle}, activation peaks {peaks} in 1F1B units, that is {chunks:g} half-stage chunks ($PP+1$ with $PP = 2p = {pp}$). The peak of $p + 1/2$ holds at {checked} points ($p$ from 1 to 8, $m$ from $2p$ to $2p+12$, F and B each from 0.5 to 2, W from 0 to 2, `overlap` from 0.5 to 1).

# %%
dualv = build("dualpipev", p, m)
tl_dualv = simulate(dualv, costs)
plots.compare([tl_dual, tl_dualv])
figure.show()


def dualpipev_peak_rule(p, extra, f, b, w, overlap):
    """DualPipeV (m >= 2p) peaks at exactly p + 1/2 of 1F1B's units, whatever the costs."""
    tl = compiled("dualpipev", p, 2 * p + extra).simulate(Costs(f=f, b=b, w=w, overlap=overlap))
    return close(max(tl.peak_activations), p + 0.5)


v_peak = sweep(dualpipev_peak_rule, {"p": (1, 8), "extra": (0, 12), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.0, 2.0),
                                     "overlap": (0.5, 1.0)}, n=40, seed=9)
md(claim(v_peak.holds and formulas.parameters_per_rank(dualv) == [1.0] * p,
         text("dualpipev-result", p=p, m=m, params=formulas.parameters_per_rank(dualv)[0], dual_params=params[0],
              makespan=tl_dualv.makespan, idle=rounded(tl_dualv.idle), peaks=rounded(tl_dualv.peak_activations),
              chunks=2 * max(tl_dualv.peak_activations), pp=2 * p, checked=v_peak.checked),
         peaks=tl_dualv.peak_activations, **v_peak.figures()))

# %% [markdown] bytes
# ~~ zh 3ea607f5
# ### 4.1 以字节计：V 形放置和 DualPipe 的两份参数
#
# 上面的"份"和"倍"换成 GB。取 Llama 3 70B（80 层，$s=8192$，TP=8 + SP，选择性激活重计算），$p=8$、$m=32$，每个参数按混合精度 Adam 记 16 字节（权重 2、梯度 2、fp32 主权重和两个动量 12）。embedding 跟着第一个 chunk，lm_head 和最后的 norm 跟着最后一个 chunk：V 形放置里这两个 chunk 都在 rank 0 上。
# ~~ en 90d46461
# ### 4.1 In bytes: the V placement and DualPipe's two copies of parameters
#
# Now turn the "micro-batches" and "times" above into GB. Take Llama 3 70B (80 layers, $s=8192$, TP=8 + SP, selective recomputation), $p=8$ and $m=32$, and count 16 bytes per parameter for mixed-precision Adam (2 for the weight, 2 for the gradient, 12 for the fp32 master weight and the two moments). The embedding goes with the first chunk, the lm_head and the final norm with the last chunk: in the V placement both chunks are on rank 0.

# %% [text] bytes-table
# ~~ zh ae4d9eaa
# | 调度 | rank 0 的参数状态 | rank 1 的参数状态 | rank 0 的激活峰值 | 最忙的 rank 一共 |
# |---|---|---|---|---|
# {rows}
# ~~ en 3a5686d4
# | schedule | rank 0's parameter state | rank 1's parameter state | rank 0's activation peak | busiest rank in all |
# |---|---|---|---|---|
# {rows}

# %%
from course.memory import PRESETS, ActivationConfig, pipeline_memory

LLAMA70 = PRESETS["llama3-70b"]
cfg70 = ActivationConfig(seq=8192, mbs=1, tp=8, sp=True, recompute="selective")
P_REAL, M_REAL, GPU = 8, 32, 80e9
shapes = {name: pipeline_memory(build(name, P_REAL, M_REAL), LLAMA70, cfg70)
          for name in ("1f1b", "zbv", "dualpipe", "dualpipev")}
fig, axes = figure.subplots(1, len(shapes), figsize=(16, 3.4), sharey=True)
for ax, (name, pm) in zip(axes, shapes.items()):
    plots.memory_bars(pm.ranks, ax=ax, gpu_mem=GPU, title=f"{name}, p={P_REAL}, m={M_REAL}")
figure.show()
md(text("bytes-table", rows="\n".join(
    f"| {name} | {pm.ranks[0].static / 1e9:.1f} GB | {pm.ranks[1].static / 1e9:.1f} GB | "
    f"{pm.ranks[0].activations / 1e9:.1f} GB | {max(pm.peak) / 1e9:.1f} GB |" for name, pm in shapes.items())))

# %% [text] bytes-v-placement
# ~~ zh b40cd628
# V 形放置（ZB-V、DualPipeV）把 embedding 和 lm_head 都放在 rank 0：它比 rank 1 多 {v_extra:.2f} GB 参数状态，正好是两张 {vocab} × {hidden} 的表（每张按 TP 切成 {tp} 份后是 {table:.2f} GB）。1F1B 里这两张表分在两个 rank 上：embedding 在 rank 0，lm_head 在 rank {last}，这两个 rank 各比中间的 rank（{middle:.1f} GB）多一张表，都是 {end:.1f} GB。词表越大，rank 0 越重：这就是 V 形调度常把 rank 0 少分几层、或者把词表再切开的原因。
# ~~ en 0075bc11
# The V placement (ZB-V, DualPipeV) puts both the embedding and the lm_head on rank 0: it holds {v_extra:.2f} GB more parameter state than rank 1, exactly two {vocab} × {hidden} tables (each {table:.2f} GB once TP splits it {tp} ways). In 1F1B the two tables sit on two ranks, the embedding on rank 0 and the lm_head on rank {last}, so each of those ranks holds one table more than a middle rank ({middle:.1f} GB): {end:.1f} GB each. The larger the vocabulary, the heavier rank 0: that is why V schedules often give rank 0 fewer layers, or split the vocabulary further.

# %% [text] bytes-dualpipe
# ~~ zh 6a2d0792
# DualPipe 的 rank $r$ 同时持有副本 A 的第 $r$ 段和副本 B 的第 $p-1-r$ 段，参数、梯度和优化器状态都是两份：rank 1 上 {dual:.1f} GB，1F1B 只要 {plain:.1f} GB。DualPipeV 折成 V 以后每个 rank 回到一份（rank 1 {dual_v:.1f} GB），最忙的 rank 从 {dual_peak:.1f} GB 降到 {dual_v_peak:.1f} GB。
# ~~ en 40e76cf2
# DualPipe's rank $r$ holds stage $r$ of copy A and stage $p-1-r$ of copy B, so its parameters, gradients and optimizer states come twice: {dual:.1f} GB on rank 1, where 1F1B needs {plain:.1f} GB. Folded into a V, DualPipeV is back to one copy per rank ({dual_v:.1f} GB on rank 1), and the busiest rank drops from {dual_peak:.1f} GB to {dual_v_peak:.1f} GB.

# %%
plain, v_shape, dual_, dual_v = (shapes[n] for n in ("1f1b", "zbv", "dualpipe", "dualpipev"))
emb_bytes = 16 * LLAMA70.vocab * LLAMA70.hidden // cfg70.tp          # one vocabulary-parallel table per TP rank
v_extra = v_shape.ranks[0].static - v_shape.ranks[1].static
one_table = [plain.ranks[r].static - plain.ranks[1].static for r in (0, P_REAL - 1)]
md(claim(abs(v_extra - 2 * emb_bytes) <= 16 * LLAMA70.hidden
         and all(abs(x - emb_bytes) <= 16 * LLAMA70.hidden for x in one_table),
         text("bytes-v-placement", v_extra=v_extra / 1e9, vocab=LLAMA70.vocab, hidden=LLAMA70.hidden, tp=cfg70.tp,
              table=emb_bytes / 1e9, last=P_REAL - 1, middle=plain.ranks[1].static / 1e9, end=plain.ranks[0].static / 1e9),
         v_extra=v_extra, emb=emb_bytes, one_table=one_table))
doubled = all(d.static == plain.ranks[r].static + plain.ranks[P_REAL - 1 - r].static for r, d in enumerate(dual_.ranks))
md(claim(doubled and dual_v.ranks[1].static == plain.ranks[1].static,
         text("bytes-dualpipe", dual=dual_.ranks[1].static / 1e9, plain=plain.ranks[1].static / 1e9,
              dual_v=dual_v.ranks[1].static / 1e9, dual_peak=max(dual_.peak) / 1e9, dual_v_peak=max(dual_v.peak) / 1e9),
         dual=[r.static for r in dual_.ranks], plain=[r.static for r in plain.ranks]))

# %% [markdown] published
# ~~ zh 4f3d6f6a
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
# ~~ en b833be4d
# ## 5. Reproducing DeepSeek's table
#
# The DeepSeek-V3 technical report (and the DualPipe repository's README) draws a DualPipe schedule (redrawn below with the same numbers of ranks and micro-batches) and gives a comparison table ($PP$ is the number of pipeline stages; F, B and W are one chunk's
# forward, full backward and weight-gradient times; F&B is the time of an overlapped forward-plus-backward pair). Later versions of the README list parameters and activations per device and add a column for the number of devices:
#
# | method | bubble | parameters per device | activations per device | devices |
# |---|---|---|---|---|
# | 1F1B | $(PP-1)(F+B)$ | 1× | $PP$ | $PP$ |
# | ZB1P | $(PP-1)(F+B-2W)$ | 1× | $PP$ | $PP$ |
# | DualPipe | $(PP/2-1)(F\&B+B-3W)$ | 2× | $PP+1$ | $PP$ |
# | DualPipeV | $(PP/2-1)(F\&B+B-3W)$ | 2× | $PP+1$ | $PP/2$ |
#
# In the DualPipeV row $PP$ counts chunks: $PP/2$ devices hold two chunks each, so "2×" is relative to one chunk. In this course's terms (relative to 1F1B on as many ranks, $p = PP/2$) that is 1×, and the activations are $p + 1/2$ of 1F1B's units.
#
# To reproduce it with the simulator, first write down the assumptions the table leaves unsaid:
#
# - Every stage has the same F, B and W, point-to-point latency is zero, and micro-batches are equal; DualPipe needs an even $p$ and an even $m \ge 2p$.
# - "Bubble" is the time a rank waits within an iteration: the makespan minus its busy time, on the worst rank.
# - "Activations" is the peak, in units of one micro-batch's activations on one stage; "parameters" counts 1F1B's parameters per rank as 1×.
# - The table's B is the full backward (this course's `b + w`), and ZB1P is ZB-H1; F&B translates to `overlap`$\times$(f + b) + w.
#
# `formulas.dualpipe_table` computes the published and the simulated values side by side:

# %% [text] published-head
# ~~ zh 70f70a29
# $PP = p = {p}$, $m = {m}$, $F=B=W={x:g}$（一个 rank 那一份），`overlap` = {overlap:g}；参数和激活按本库的口径（同样的 rank 数、1F1B 单位），所以每一行的设备数相同：
#
# | 方法 | 设备数 | bubble（公开） | bubble（模拟） | 每个设备的参数（公开 / 模拟） | 每个设备的激活（公开 / 模拟） |
# |---|---|---|---|---|---|
# ~~ en 013e01f8
# $PP = p = {p}$, $m = {m}$, $F=B=W={x:g}$ (one rank's share), `overlap` = {overlap:g}; parameters and activations in this course's terms (the same number of ranks, 1F1B's units), so every row has the same number of devices:
#
# | method | devices | bubble (published) | bubble (simulated) | parameters per device (published / sim) | activations per device (published / sim) |
# |---|---|---|---|---|---|

# %%
P8, M8 = 8, 20


def table(costs):
    data = formulas.dualpipe_table(P8, M8, costs)
    rows = [f"| {r['method']} | {P8} | {r['bubble_published']:g} | {r['bubble_simulated']:g} | "
            f"{r['parameters_published']:g} / {r['parameters_simulated']:g} | "
            f"{r['activations_published']:g} / {r['activations_simulated']:g} |" for r in data]
    return data, "\n".join(rows)


equal = Costs(f=1, b=1, w=1)
data_equal, text_equal = table(equal)
md(text("published-head", p=P8, m=M8, x=equal.f, overlap=equal.overlap) + "\n" + text_equal)
plots.gantt(simulate(build("dualpipe", P8, M8), equal), labels=False,
            title=f"dualpipe, p={P8}, m={M8} (the setting of DeepSeek's schedule figure)")
figure.show()

# %% [text] published-agree
# ~~ zh e0eac335
# 参数和激活两列全部吻合：DualPipe 是 {dual_params:g}× 参数、峰值 {dual_act:g} 份（$PP+1$），DualPipeV 是 {v_params:g}× 参数、{v_act:g} 份 1F1B 单位（即 $2p+1$ 个半 stage）。这两列在 {checked} 个点上（偶数 $p$ 取 2..8，偶数 $m$ 取 $2p$..$2p+8$，F、B 各取 0.5..2，W 取 0..2，`overlap` 取 0.5..1）都吻合。bubble 一列，{agree} 与公式一致；{differ} 不一致：DualPipe 公式给 {dual_pub:g}，模拟只有 {dual_sim:g}。
# ~~ en f23f474c
# The parameter and activation columns match throughout: DualPipe has {dual_params:g}× the parameters and peaks at {dual_act:g} ($PP+1$), DualPipeV has {v_params:g}× and {v_act:g} in 1F1B's units ($2p+1$ half-stage chunks). Both columns match at {checked} points (even $p$ from 2 to 8, even $m$ from $2p$ to $2p+8$, F and B each from 0.5 to 2, W from 0 to 2, `overlap` from 0.5 to 1). In the bubble column {agree} agree with the formula and {differ} do not: for DualPipe the formula gives {dual_pub:g}, the simulation only {dual_sim:g}.

# %%
def columns_rule(half_p, k, f, b, w, overlap):
    """The parameter and activation columns of the published table equal the simulated ones."""
    rows = formulas.dualpipe_table(2 * half_p, 4 * half_p + 2 * k, Costs(f=f, b=b, w=w, overlap=overlap))
    return all(close(r[f"{col}_published"], r[f"{col}_simulated"]) for r in rows for col in ("parameters", "activations"))


columns = sweep(columns_rule, {"half_p": (1, 4), "k": (0, 4), "f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.0, 2.0),
                               "overlap": (0.5, 1.0)}, n=8, seed=10)
by = {r["schedule"]: r for r in data_equal}
agree = [r["method"] for r in data_equal if close(r["bubble_published"], r["bubble_simulated"])]
differ = [r["method"] for r in data_equal if r["method"] not in agree]
md(claim(columns.holds and bool(agree) and bool(differ)
         and all(close(r[f"{col}_published"], r[f"{col}_simulated"]) for r in data_equal
                 for col in ("parameters", "activations")),
         text("published-agree", dual_params=by["dualpipe"]["parameters_simulated"],
              dual_act=by["dualpipe"]["activations_simulated"], v_params=by["dualpipev"]["parameters_simulated"],
              v_act=by["dualpipev"]["activations_simulated"], checked=columns.checked, agree=", ".join(agree),
              differ=", ".join(differ), dual_pub=by["dualpipe"]["bubble_published"],
              dual_sim=by["dualpipe"]["bubble_simulated"]),
         data=data_equal, **columns.figures()))

# %% [markdown] dx-timing
# ~~ zh 20a25d48
# 不一致不是顺序写错了（本库的 `dualpipe` 按 DeepSeek 的八个阶段逐步生成），而是**什么时候放出 $\mathrm{d}X$**：
# 本库计划里的 B 只是输入梯度，B 一结束 $\mathrm{d}X$ 就发给上一个 rank，W 随后再做。DeepSeek 的 `dualpipe.py` 里，
# `_backward_compute_chunk(enable_zb=False)` 做一次完整的 autograd 反向（$\mathrm{d}X$ 和 $\mathrm{d}W$ 一起），之后才
# `_send_backward`；只有 `enable_zb=True` 的反向（阶段 3、7 和阶段 6 的后一半）把 $\mathrm{d}W$ 留到后面。
#
# 不改模拟器也能检验这件事：`course.replay.whole_backward` 把"紧跟着自己 W 的 B"（没有推迟的反向）的时长加上 W、W 本身记 0，
# `course.replay.replay` 按这些时长重放同一个 plan，$\mathrm{d}X$ 就在 W 之后才放出。可以只对 F&B 里的反向这样做，
# 也可以对所有没推迟 W 的反向都这样做（DeepSeek 代码的行为）。
# ~~ en 93e68744
# The disagreement is not a wrong order (this course's `dualpipe` is generated step by step from DeepSeek's eight phases) but **when $\mathrm{d}X$ leaves**:
# a B in this course's plans is the input gradient only, so $\mathrm{d}X$ goes to the previous rank as soon as B ends and W runs afterwards. In DeepSeek's `dualpipe.py`,
# `_backward_compute_chunk(enable_zb=False)` runs one whole autograd backward ($\mathrm{d}X$ and $\mathrm{d}W$ together) and only then
# calls `_send_backward`; only the backwards with `enable_zb=True` (phases 3 and 7, and the second half of phase 6) leave $\mathrm{d}W$ for later.
#
# This can be tested without changing the simulator: `course.replay.whole_backward` adds W to the duration of every "B followed by its own W" (a backward not deferred) and counts that W as 0,
# and `course.replay.replay` replays the same plan with those durations, so $\mathrm{d}X$ leaves only after W. One can do this for the backwards inside F&B only,
# or for every backward that does not defer its W (what DeepSeek's code does).

# %% [markdown] predict-whole
# ~~ zh 15d752ae
# **预测：** $F=B=W=1$ 时，按 DeepSeek 代码的规则（所有没推迟 W 的反向都是整块）重新计时，DualPipe 的 bubble 是多少？公式给的是上表的值。
# ~~ en 993c2922
# **Predict:** with $F=B=W=1$, re-timed by the rule of DeepSeek's code (every backward that does not defer its W is one block), what is DualPipe's bubble? The formula gives the value in the table above.

# %%
guess_whole = None      # a number

# %% [text] rules-head
# ~~ zh 50ae9e9f
# $PP = p = {p}$, $m = {m}$：
#
# | 调度 | 代价 | 公开 | B 后放出 dX（本库） | F&B 里的反向整块 | 所有没推迟的反向整块（DeepSeek 的代码） |
# |---|---|---|---|---|---|
# ~~ en 62666514
# $PP = p = {p}$, $m = {m}$:
#
# | schedule | costs | published | dX after B (this course) | F&B backward whole | every undeferred backward whole (DeepSeek's code) |
# |---|---|---|---|---|---|

# %%
from course.replay import replay, whole_backward

RULES = ("published", "dX after B", "F&B backward whole", "every undeferred backward whole")
_plans = {}


def plan_of(name, p, m):
    if (name, p, m) not in _plans:
        _plans[name, p, m] = build(name, p, m)
    return _plans[name, p, m]


def bubbles(name, c, p=P8, m=M8):
    """Worst rank's makespan - busy under three rules for when dX leaves: B alone, pair's B whole, every undeferred B whole."""
    plan = plan_of(name, p, m)
    timelines = (compiled(name, p, m).simulate(c), replay(plan, whole_backward(plan, c, pairs_only=True)),
                 replay(plan, whole_backward(plan, c)))
    return dict(zip(RULES, [formulas.published_bubble(name, p, c)]
                    + [max(tl.makespan - b for b in tl.busy) for tl in timelines]))


rule_rows = []
rules = {}
for name in ("dualpipe", "dualpipev"):
    for label, c in (("F=B=W=1", Costs(f=1, b=1, w=1)), ("F=B=W=1, overlap 0.7", Costs(f=1, b=1, w=1, overlap=0.7)),
                     ("F=B=1, W=0.5", Costs(f=1, b=1, w=0.5)), ("F=B=1, W=0", Costs(f=1, b=1, w=0))):
        rules[name, label] = bubbles(name, c)
        rule_rows.append(f"| {name} | {label} | " + " | ".join(f"{x:.4g}" for x in rules[name, label].values()) + " |")
md(text("rules-head", p=P8, m=M8) + "\n" + "\n".join(rule_rows))

# %% [text] reveal-whole
# ~~ zh 0806c33f
# 按 DeepSeek 代码的规则是 {every:g}，比公式的 {published:g} 还大；本库的规则是 {ours:g}。只把 F&B 里的反向当整块，$F=B=W$ 时（不论 `overlap`）DualPipe 和 DualPipeV 都正好得到公式的值，$W=0$ 时三种规则都与公式一致。所以公式描述的是"F&B 里的反向整块、其余反向先放 $\mathrm{{d}}X$"、格子等宽的示意图。这些规律在 {checked_pair} 个点上检查过（DualPipe 取偶数 $p$ 2..8，DualPipeV 取 $p$ 2..8，$m$ 取 $2p$..$2p+8$，$F=B$ 取 0.5..2，W 取 0 或 $F$，`overlap` 取 0.5..1）。另外两条有前提：DeepSeek 代码的规则比公式大，要 rank 够多（DualPipe $p \ge 6$、DualPipeV $p \ge 3$；更少时相等），检查了 {checked_every} 个点；本库的规则比公式小，要 $0 < W \le F = B$ 且 `overlap` > 0.5（DualPipe $p \ge 4$、DualPipeV $p \ge 2$；`overlap` = 0.5 时相等），检查了 {checked_ours} 个点。$W$ 取别的值时公式不再描述任何一种规则：这里 $W = 0.5$，公式给 {half_pub:g}，三种规则分别是 {half_ours:g}、{half_pair:g} 和 {half_every:g}。
# ~~ en a7f79379
# By the rule of DeepSeek's code it is {every:g}, more than the formula's {published:g}; by this course's rule it is {ours:g}. Treating only the backward inside each F&B as one block gives exactly the formula's value at $F=B=W$ (whatever `overlap` is), for DualPipe and DualPipeV alike, and at $W=0$ all three rules agree with the formula. So the formula describes "the backward inside F&B as one block, every other backward releasing $\mathrm{{d}}X$ first", on a figure with cells of equal width. These rules were checked at {checked_pair} points (DualPipe at even $p$ from 2 to 8, DualPipeV at $p$ from 2 to 8, $m$ from $2p$ to $2p+8$, $F=B$ from 0.5 to 2, W either 0 or $F$, `overlap` from 0.5 to 1). Two more need conditions: DeepSeek's code exceeds the formula only with enough ranks (DualPipe $p \ge 6$, DualPipeV $p \ge 3$; with fewer they are equal), checked at {checked_every} points; this course's rule is below the formula when $0 < W \le F = B$ and `overlap` > 0.5 (DualPipe $p \ge 4$, DualPipeV $p \ge 2$; at `overlap` = 0.5 they are equal), checked at {checked_ours} points. At other values of $W$ the formula describes none of the rules: here, at $W = 0.5$, it gives {half_pub:g}, and the three rules give {half_ours:g}, {half_pair:g} and {half_every:g}.

# %%
def pair_rule(name, p, k, x, w_is_f, overlap):
    """F = B and W in {0, F}: the pair-whole rule gives the published bubble; at W = 0 every rule does."""
    got = bubbles(name, Costs(f=x, b=x, w=x if w_is_f else 0.0, overlap=overlap), p, 2 * p + 2 * k)
    agreeing = RULES[2:3] if w_is_f else RULES[1:]
    return all(close(got[rule], got["published"]) for rule in agreeing)


def every_rule(name, p, k, x, overlap):
    """F = B = W with enough ranks: DeepSeek's code path idles more than the formula says."""
    got = bubbles(name, Costs(f=x, b=x, w=x, overlap=overlap), p, 2 * p + 2 * k)
    return got["every undeferred backward whole"] > got["published"] + EPS


def ours_rule(name, p, k, x, w_share, overlap):
    """0 < W <= F = B and overlap > 0.5: releasing dX after B idles less than the formula says."""
    got = bubbles(name, Costs(f=x, b=x, w=w_share * x, overlap=overlap), p, 2 * p + 2 * k)
    return got["dX after B"] < got["published"] - EPS


def on_both(rule, dual_ps, v_ps, space, n, seed):
    """``rule`` swept for DualPipe at the (even) p in dual_ps and for DualPipeV at the p in v_ps, as one Sweep."""
    parts = [(name, sweep(functools.partial(rule, name), {"p": ps, **space}, n=n, seed=seed))
             for name, ps in (("dualpipe", dual_ps), ("dualpipev", v_ps))]
    return Sweep(sum(s.checked for _, s in parts), [{"schedule": name, **pt} for name, s in parts for pt in s.counterexamples])


common = {"k": (0, 4), "x": (0.5, 2.0), "overlap": (0.5, 1.0)}
pair_sweep = on_both(pair_rule, [2, 4, 6, 8], (2, 8), {**common, "w_is_f": [False, True]}, n=8, seed=11)
every_sweep = on_both(every_rule, [6, 8], (3, 8), common, n=8, seed=12)
ours_sweep = on_both(ours_rule, [4, 6, 8], (2, 8), {**common, "w_share": (0.05, 1.0), "overlap": (0.51, 1.0)}, n=8,
                     seed=13)
equal_rule = rules["dualpipe", "F=B=W=1"]
half_w = rules["dualpipe", "F=B=1, W=0.5"]
md(reveal(guess_whole, equal_rule["every undeferred backward whole"],
          claim(pair_sweep.holds and every_sweep.holds and ours_sweep.holds
                and all(close(v["F&B backward whole"], v["published"]) for k, v in rules.items() if k[1] != "F=B=1, W=0.5")
                and equal_rule["every undeferred backward whole"] > equal_rule["published"] > equal_rule["dX after B"]
                and not any(close(half_w[rule], half_w["published"]) for rule in RULES[1:]),
                text("reveal-whole", every=equal_rule["every undeferred backward whole"], published=equal_rule["published"],
                     ours=equal_rule["dX after B"], checked_pair=pair_sweep.checked, checked_every=every_sweep.checked,
                     checked_ours=ours_sweep.checked, half_pub=half_w["published"], half_ours=half_w["dX after B"],
                     half_pair=half_w["F&B backward whole"], half_every=half_w["every undeferred backward whole"]),
                rules=rules, pair=pair_sweep.figures(), every=every_sweep.figures(), ours=ours_sweep.figures())))

# %% [markdown] cases
# ~~ zh 8da9c6eb
# 再换几组 F、B 的比例，看公式和本库的模拟在哪里一致：
# ~~ en c5add843
# Now try a few ratios of F to B and see where the formula and this course's simulation agree:

# %% [text] cases-head
# ~~ zh a2b15cf6
# $PP = p = {p}$, $m = {m}$：
#
# | 代价 | DualPipe 公开 | DualPipe 模拟 | DualPipeV 公开 | DualPipeV 模拟 |
# |---|---|---|---|---|
# ~~ en 0e2ac606
# $PP = p = {p}$, $m = {m}$:
#
# | costs | DualPipe published | DualPipe simulated | DualPipeV published | DualPipeV simulated |
# |---|---|---|---|---|

# %% [text] cases-verdict
# ~~ zh 38d2dd40
# 前两行（$F = B$、$W = 0$，`overlap` 为 1 或 0.7）公式与模拟一致，后三行不一致。规律是：$F = B$ 且 $W = 0$ 时（无论 `overlap` 多少）两者相同；$W > 0$（且 `overlap` > 0.5）时模拟更小，原因就是上面说的 $\mathrm{{d}}X$ 放出时机；$F \ne B$ 时公式本身只是近似，偏大偏小都有：$F = 2B$ 时公式 {f2b_pub:g}、模拟 {f2b_sim:g}（公式偏小），$B = 2F$ 时公式 {b2f_pub:g}、模拟 {b2f_sim:g}（公式偏大）。在 {checked} 个 $W = 0$、$F \ne B$ 的点上（DualPipe 取 $p$ 4..8，DualPipeV 取 $p$ 2..8，$m$ 取 $2p$..$2p+8$，F、B 各取 0.5..2，`overlap` 取 0.5..1），公式没有一次等于模拟，比模拟大的有 {above} 个、小的有 {below} 个。它是按 DeepSeek 示意图里等宽的格子推出来的。
# ~~ en 521363d5
# The formula and the simulation agree on the first two rows ($F = B$, $W = 0$, with `overlap` 1 or 0.7) and disagree on the other three. The pattern: with $F = B$ and $W = 0$ (whatever `overlap` is) they are the same; with $W > 0$ (and `overlap` > 0.5) the simulation is smaller, for the reason above, when $\mathrm{{d}}X$ leaves; with $F \ne B$ the formula itself is only an approximation, off in both directions: at $F = 2B$ it gives {f2b_pub:g} where the simulation gives {f2b_sim:g} (too low), at $B = 2F$ {b2f_pub:g} where the simulation gives {b2f_sim:g} (too high). At {checked} points with $W = 0$ and $F \ne B$ (DualPipe at $p$ from 4 to 8, DualPipeV at $p$ from 2 to 8, $m$ from $2p$ to $2p+8$, F and B each from 0.5 to 2, `overlap` from 0.5 to 1) the formula never once equals the simulation; it is above it at {above} points and below at {below}. It was derived from the equal-width cells of DeepSeek's figure.

# %%
cases = {
    "F = B, W = 0": Costs(f=1, b=1, w=0),
    "F = B, W = 0, overlap 0.7": Costs(f=1, b=1, w=0, overlap=0.7),
    "F = B = W": Costs(f=1, b=1, w=1),
    "F = 2B, W = 0": Costs(f=2, b=1, w=0),
    "B = 2F, W = 0": Costs(f=1, b=2, w=0),
}
rows = []
verdict, published_vs_sim = {}, {}
for label, c in cases.items():
    got = {r["schedule"]: r for r in formulas.dualpipe_table(P8, M8, c)}
    pairs = [(got[s]["bubble_published"], got[s]["bubble_simulated"]) for s in ("dualpipe", "dualpipev")]
    verdict[label] = all(close(a, b) for a, b in pairs)
    published_vs_sim[label] = pairs[0]                       # DualPipe's (published, simulated)
    rows.append(f"| {label} | " + " | ".join(f"{x:.4g}" for pair in pairs for x in pair) + " |")
md(text("cases-head", p=P8, m=M8) + "\n" + "\n".join(rows))
f2b, b2f = published_vs_sim["F = 2B, W = 0"], published_vs_sim["B = 2F, W = 0"]
sides = []


def uneven_rule(name, p, k, f, b, overlap):
    """W = 0 and F != B: the published bubble is not the simulated one (either side)."""
    if abs(f - b) < 0.05:
        return True
    got = bubbles(name, Costs(f=f, b=b, w=0, overlap=overlap), p, 2 * p + 2 * k)
    sides.append(got["published"] > got["dX after B"])
    return not close(got["published"], got["dX after B"])


uneven_sweep = on_both(uneven_rule, [4, 6, 8], (2, 8), {"k": (0, 4), "f": (0.5, 2.0), "b": (0.5, 2.0),
                                                        "overlap": (0.5, 1.0)}, n=8, seed=14)
md(claim(list(verdict.values()) == [True, True, False, False, False] and f2b[0] < f2b[1] and b2f[0] > b2f[1]
         and uneven_sweep.holds and any(sides) and not all(sides),
         text("cases-verdict", f2b_pub=f2b[0], f2b_sim=f2b[1], b2f_pub=b2f[0], b2f_sim=b2f[1],
              checked=len(sides), above=sum(sides), below=len(sides) - sum(sides)),
         verdict=verdict, published_vs_sim=published_vs_sim, **uneven_sweep.figures()))

# %% [markdown] conclusion
# ~~ zh 0fb685c2
# 结论：表格的参数和激活两列在它的假设下完全可复现；bubble 一列在"F&B 里的反向整块执行"的规则下、$F=B=W$ 或 $W=0$ 的等宽格子里精确成立。
# 当 W 可以从反向里拆出来单独排（正是上一章零 bubble 的前提），同样的 DualPipe 顺序 bubble 更小（`overlap` > 0.5 时）；DeepSeek 代码里其余没推迟 W 的反向
# 也是整块，rank 够多时实际的 bubble 比公式大。引用这张表时要带上它的假设。
#
# ## 6. 自己动手
#
# 选调度、rank 数（偶数）、micro-batch 数（`m_per_2p`：$m = 2p \times$ 它）和重叠系数。留意：`overlap` 只影响有 F&B 步的 DualPipe 和 DualPipeV；
# ZB-V 的激活峰值不随 $m$ 增长，DualPipe 的峰值始终是 $p+1$。
# ~~ en 82a505a3
# The upshot: under its assumptions the table's parameter and activation columns reproduce exactly; its bubble column holds exactly for the rule "the backward inside F&B runs as one block", on equal-width cells with $F=B=W$ or $W=0$.
# When W can be split off the backward and scheduled on its own (last chapter's premise for zero bubble), the same DualPipe order has less bubble (with `overlap` > 0.5); in DeepSeek's code every other backward that does not defer its W
# is one block too, and with enough ranks the real bubble is larger than the formula. Quote the table together with its assumptions.
#
# ## 6. Try it yourself
#
# Pick a schedule, the number of ranks (even), the number of micro-batches (`m_per_2p`: $m = 2p \times$ that) and the overlap coefficient. Notice that `overlap` affects only DualPipe and DualPipeV, which have F&B steps;
# ZB-V's activation peak does not grow with $m$, and DualPipe's is always $p+1$.

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

# %% [markdown] task-overlap
# ~~ zh 3bf20261
# **任务：** 选 `dualpipev`、$p=4$、`m_per_2p` = 1，把 `overlap` 从 1 往下拖：从哪个值起，DualPipeV 的 makespan 比同样设置下 `zbv` 的短？写进 `answer_overlap`。
# ~~ en ee72702c
# **Task:** choose `dualpipev`, $p=4$ and `m_per_2p` = 1, and drag `overlap` down from 1: from which value on is DualPipeV's makespan shorter than `zbv`'s in the same setting? Put it in `answer_overlap`.

# %%
answer_overlap = None   # a value on the slider, 0.5 .. 1.0

# %% [text] task-reveal
# ~~ zh d8648834
# ZB-V 是 {zbv:g}，不受 `overlap` 影响；DualPipeV 在 `overlap` = 1 时和它一样长，`overlap` $\le$ {first:g} 时更短。两者放置相同、显存同一量级，只要配对能藏住一点通信，DualPipeV 就占优：在 {checked} 个点上（$p$ 取 2..8，$m$ 取 $2p$、$4p$、$6p$、$8p$，`overlap` 取滑块上的值 0.5..1），$F=B=W$ 时 DualPipeV 恰好在 `overlap` < 1 时更短、`overlap` = 1 时一样长。$F$、$B$、$W$ 不相等时这不再总是成立：在 {checked_uneven} 个点上（F、B、W 各取 0.5..2，`overlap` 取 0.5..0.95）有 {broken_uneven} 个点 DualPipeV 并不更短。
# ~~ en ed108c52
# ZB-V takes {zbv:g}, whatever `overlap` is; DualPipeV takes just as long at `overlap` = 1 and less from `overlap` $\le$ {first:g}. The two have the same placement and memory of the same size, so as soon as pairing hides a little communication DualPipeV is ahead: at {checked} points ($p$ from 2 to 8, $m$ of $2p$, $4p$, $6p$ or $8p$, `overlap` at the slider's values from 0.5 to 1), with $F=B=W$ DualPipeV is shorter exactly when `overlap` < 1 and as long at `overlap` = 1. With unequal $F$, $B$, $W$ this no longer always holds: at {checked_uneven} points (F, B and W each from 0.5 to 2, `overlap` from 0.5 to 0.95) DualPipeV is not shorter at {broken_uneven} of them.

# %%
SLIDER_OV = [round(1.0 - 0.05 * k, 2) for k in range(11)]
zbv_span = simulate(build("zbv", 4, 8), Costs(f=1, b=1, w=1)).makespan
v_spans = {ov: simulate(build("dualpipev", 4, 8), Costs(f=1, b=1, w=1, overlap=ov)).makespan for ov in SLIDER_OV}
beats = [ov for ov, span in v_spans.items() if span < zbv_span - EPS]


def dualpipev_beats_zbv(p, k, overlap, f=1.0, b=1.0, w=1.0):
    """DualPipeV is shorter than ZB-V when overlap < 1, as long at overlap = 1 (F = B = W)."""
    c = Costs(f=f, b=b, w=w)
    ours = compiled("dualpipev", p, 2 * p * k).simulate(Costs(f=f, b=b, w=w, overlap=overlap)).makespan
    theirs = compiled("zbv", p, 2 * p * k).simulate(c).makespan
    return ours < theirs - EPS if overlap < 1 - EPS else close(ours, theirs)


task_sweep = sweep(dualpipev_beats_zbv, {"p": (2, 8), "k": (1, 4), "overlap": SLIDER_OV}, n=30, seed=15)
uneven_task = sweep(dualpipev_beats_zbv, {"p": (2, 8), "k": (1, 3), "overlap": (0.5, 0.95), "f": (0.5, 2.0),
                                          "b": (0.5, 2.0), "w": (0.5, 2.0)}, n=30, seed=16)
md(reveal(answer_overlap, max(beats) if beats else None,
          claim(task_sweep.holds and not uneven_task.holds and bool(beats) and close(v_spans[1.0], zbv_span),
                text("task-reveal", zbv=zbv_span, first=max(beats) if beats else 0, checked=task_sweep.checked,
                     checked_uneven=uneven_task.checked, broken_uneven=len(uneven_task.counterexamples)),
                beats=beats, v_spans=v_spans, **task_sweep.figures())))

# %% [markdown] summary
# ~~ zh 5867950e
# ## 怎么讲清楚
#
# - **ZB-V**：$2p$ 个半 stage 的 chunk 按 V 形放置（rank $r$ 持有 $r$ 和 $2p-1-r$），转折处在本 rank 上接着算；
#   $F=B=W$、$m \ge 2p$ 时每个 rank 窗口内零空闲，makespan 达到下界，激活峰值不超过 1F1B 的 $p$。同样的放置也是 V-Min、V-Half、V-ZB 的放置（第 5 章 §6）。
# - **DualPipe**：两个方向的 micro-batch 从两端同时进入，每个 rank 存两份 stage（2× 参数），激活峰值 $p+1$；
#   八个阶段里，主阶段（4）一个方向的前向和另一个方向的反向配成 F&B，让 EP 的 all-to-all 藏在计算后面。
# - **F&B 重叠**：一对 F&B 在计算流和通信流上交错，不会短于较长的那条流，`overlap` $\ge \max(C, K)/(C+K)$；
#   all-to-all 不长于计算时正好相等。没有通信可藏时配对不省时间。
# - **配对不需要双向**：单向 1F1B 也能配对，但要把预热加深一倍、多存一倍激活（峰值 $2p$）才不拖慢；双向或 V 形折返让一对的数据流向同一个邻居，
#   在 1F1B 量级的显存下配对，并把灌满和排空减半。
# - **DualPipeV**：同样的顺序折成 V 形，一份参数，激活峰值 $p + 1/2$。
# - **表格**：参数、激活两列在"均匀 stage、零延迟"的假设下由模拟精确复现；bubble $(PP/2-1)(F\&B+B-3W)$ 对应 F&B 里的反向整块执行
#   （$\mathrm{d}W$ 算完才放出 $\mathrm{d}X$），$F=B=W$ 或 $W=0$ 时重放结果与它完全相同；W 拆开单独排时，同样的顺序 bubble 更小（`overlap` > 0.5）；
#   DeepSeek 代码里其余没推迟的反向也是整块，rank 够多时 bubble 更大；$F \ne B$ 时公式只是近似。
#
# ## 练习
#
# - `v-placement`（★☆☆）：从三条要求推出 V 形放置（推广到 $v$ 个 chunk），数出一个 micro-batch 前向要跨 rank 几次。
# - `dualpipev-from-dualpipe`（★★★）：把 $2p$ 个 rank 上的 DualPipe 对折成 $p$ 个 rank 上的 DualPipeV：要哪一半、
#   stage 和 micro-batch 怎么重新编号。
# - `fb-overlap-order`（★★★）：只有一份参数、一条路线（V 形放置），设计一个用上 F&B 重叠的顺序：激活峰值不超过 $p+1$（本章单向配对要 $2p$），
#   永远不比 1F1B 慢，`overlap <= 0.75` 时至少快 10%。
#
# ```bash
# python practice/judge.py start v-placement
# python practice/judge.py start dualpipev-from-dualpipe
# python practice/judge.py start fb-overlap-order
# ```
# ~~ en f53bfbf0
# ## How to explain it
#
# - **ZB-V**: $2p$ half-stage chunks in a V (rank $r$ holds $r$ and $2p-1-r$), the turn computed on the same rank;
#   with $F=B=W$ and $m \ge 2p$ every rank has zero idle time inside its window, the makespan meets its lower bound, and the activation peak never exceeds 1F1B's $p$. The same placement carries V-Min, V-Half and V-ZB (chapter 5 §6).
# - **DualPipe**: micro-batches of two directions enter at both ends at once, every rank keeps two stages (2× parameters), and activations peak at $p+1$;
#   of its eight phases, the main one (4) pairs one direction's forward with the other's backward as F&B, hiding EP's all-to-all behind computation.
# - **F&B overlap**: an F&B pair interleaves on a compute and a communication stream and is never shorter than the longer stream, `overlap` $\ge \max(C, K)/(C+K)$;
#   it is exactly that when no all-to-all is longer than the computation. With no communication to hide, pairing saves no time.
# - **Pairing does not need two directions**: one-directional 1F1B can pair too, but only with a warm-up twice as deep and twice the activations (a peak of $2p$) does it stop slowing down; two directions or the V's turn send a pair's data to the same neighbour,
#   so it pairs at 1F1B-sized memory and halves the fill and the drain.
# - **DualPipeV**: the same order folded into a V, one copy of the parameters, an activation peak of $p + 1/2$.
# - **The table**: its parameter and activation columns reproduce exactly under "uniform stages, zero latency"; the bubble $(PP/2-1)(F\&B+B-3W)$ corresponds to the backward inside F&B running as one block
#   ($\mathrm{d}X$ released only after $\mathrm{d}W$), and re-timing gives exactly that at $F=B=W$ or $W=0$; with W split off and scheduled on its own the same order has less bubble (`overlap` > 0.5);
#   in DeepSeek's code every other undeferred backward is one block too, and with enough ranks the bubble is larger; with $F \ne B$ the formula is an approximation.
#
# ## Exercises
#
# - `v-placement` (★☆☆): derive the V placement from three requirements (generalised to $v$ chunks), and count how often a micro-batch's forward crosses ranks.
# - `dualpipev-from-dualpipe` (★★★): fold a DualPipe on $2p$ ranks into a DualPipeV on $p$ ranks: which half to keep,
#   how to renumber stages and micro-batches.
# - `fb-overlap-order` (★★★): with one copy of the parameters and one route (the V placement), design an order that uses F&B overlap: activations peak at no more than $p+1$ (this chapter's one-directional pairing needs $2p$),
#   never slower than 1F1B, at least 10% faster when `overlap <= 0.75`.
#
# ```bash
# python practice/judge.py start v-placement
# python practice/judge.py start dualpipev-from-dualpipe
# python practice/judge.py start fb-overlap-order
# ```
