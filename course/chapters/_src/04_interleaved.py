# %% [markdown] intro
# ~~ zh 02a39d88
# # 第 4 章　交错式 1F1B：用虚拟 stage 把 bubble 除以 v
#
# 前几章里，1F1B 的 bubble 占比是 $(p-1)/(m+p-1)$：要么加大 micro-batch 数 $m$（受全局 batch 和小矩阵效率限制），要么只能接受。
# Megatron-LM 的交错调度（interleaved 1F1B，也叫 virtual pipeline）换了一个思路：**不改 $m$，把每个 rank 负责的那段模型再切细**。
# 本章用模拟器和真实的多进程运行回答三个问题：bubble 为什么正好缩小到 $1/v$；代价（点对点通信、激活显存、整除约束）有多大；
# 什么时候不值得。术语对照见[术语表](glossary.md)。
#
# **在浏览器里（浏览器版）：** 请 torch 排出它的顺序的格子（`course.torch_bridge`）和多进程真跑（`course.live`）要 torch：浏览器里它们显示录制的结果（会注明，并给出重跑的命令），桌面版（`make lab`）里实时运行。
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
# 5. 不是。点对点消息约 $\times v$：延迟 $c$ 不超过一个 chunk 上较短的操作时，灌满和排空路上的 $2(vp-1)$ 次传输每次都付它，所以从 $v$ 加到 $v+1$ 只在
#    $v(v+1) < (p-1)(F+B)/(2pc)$ 时划算（第 7 节）；每个 chunk 更小，矩阵乘效率下降；层数要能被 $vp$ 整除。
#    激活显存反而不是理由：rank 0 的峰值是 $p + (p-1)/v$ 份，比 1F1B 多的 $(p-1)/v$ 随 $v$ 增大而变小。
#
# </details>
# ~~ en d2156447
# # Chapter 4. Interleaved 1F1B: virtual stages divide the bubble by v
#
# In the chapters so far, 1F1B's bubble fraction is $(p-1)/(m+p-1)$: either we raise the number of micro-batches $m$ (limited by the global batch and by the efficiency of small matrix products), or we live with it.
# Megatron-LM's interleaved schedule (interleaved 1F1B, also called the virtual pipeline) takes another route: **keep $m$, and cut each rank's share of the model into finer pieces**.
# With the simulator and real multi-process runs this chapter answers three questions: why the bubble shrinks to exactly $1/v$; what it costs (point-to-point traffic, activation memory, divisibility constraints); and when it is not worth it. The [glossary](../glossary.md) pairs every term with its Chinese counterpart.
#
# **In the browser (the browser edition):** the cells that ask torch for its orders (`course.torch_bridge`) and the multi-process run (`course.live`) need torch: the browser shows their recorded results (marked as such, with the command that reruns them), the desktop edition (`make lab`) runs them live.
#
# ## Self-test
#
# 1. In an interleaved schedule, how many pieces of the model does one rank hold? Are they neighbours in the model?
# 2. Why does the bubble shrink to exactly $1/v$ of what it was, and not by some other factor?
# 3. How many times per iteration does one micro-batch's activation cross from one rank to another? How does that compare with 1F1B?
# 4. What does Megatron's interleaved order require of $m$, and why?
# 5. Is a larger $v$ always better? Name at least two limits.
#
# <details><summary>Answers (answer first, then open)</summary>
#
# 1. $v$ pieces, none of them neighbours. The model is cut into $vp$ chunks (virtual stages) and rank $r$ holds chunks $r, r+p, \dots, r+(v-1)p$,
#    so one micro-batch's forward goes round the $p$ ranks $v$ times.
# 2. The fill and the drain are as long as the time of one chunk: the first micro-batch needs $p-1$ hand-overs between ranks to reach the last rank,
#    and each leg does only $1/v$ of the work, so the fill and the drain shrink to $1/v$, while each rank's total work $m(F+B)$ stays the same.
#    Hence makespan $= m(F+B) + (p-1)(F+B)/v$ and a bubble fraction of $(p-1)/(vm+p-1)$.
# 3. $vp-1$ times forward (as many backward), against $p-1$ in 1F1B: a ratio of $(vp-1)/(p-1)$, slightly more than $v$. Each message is as large as before (one micro-batch's activation).
# 4. Megatron's classic order needs $m$ to be a multiple of $p$: a rank rotates micro-batches through its chunks in groups of $p$ (the library's `interleaved`).
#    That is not a limit of interleaving as such: torch's `ScheduleInterleaved1F1B` relaxes the group size to $m / \max(1, \lfloor m/p \rfloor)$
#    and only needs $m$ to be a multiple of the number of rounds $\max(1, \lfloor m/p \rfloor)$ ($p=4$ accepts $m=3$ and $m=10$; the library's `interleaved-flex`). A group larger than $p$ means more activations stored during the warm-up.
# 5. No. There are about $v$ times as many point-to-point messages: as long as the latency $c$ is at most one chunk's shorter operation, each of the $2(vp-1)$ transfers on the way in and out of the pipeline pays it, so going from $v$ to $v+1$ pays off only while
#    $v(v+1) < (p-1)(F+B)/(2pc)$ (section 7). Each chunk is smaller, so the matrix products run less efficiently. And the number of layers must be a multiple of $vp$.
#    Activation memory, on the other hand, is no reason: rank 0 peaks at $p + (p-1)/v$ micro-batches, and the $(p-1)/v$ above 1F1B shrinks as $v$ grows.
#
# </details>

# %%
import math
from functools import cache

from course import figure, formulas, plots
from course.chapter import md, open_chapter
from course.claims import claim, reveal, sweep
from course.costs import Costs
from course.plan import Op, Plan, ops_of
from course.schedules import build
from course.sim import simulate
from course.sim_compiled import CompiledPlan
from course.widgets import explore

text = open_chapter("04_interleaved")


def schedule(p, m, v):
    """Plain 1F1B for v = 1, Megatron's interleaved 1F1B with v chunks per rank otherwise."""
    return build("1f1b", p, m) if v == 1 else build("interleaved", p, m, v=v)


@cache
def compiled(p, m, v):
    """schedule(p, m, v), checked and laid out once: the sweeps below simulate it under many costs."""
    return CompiledPlan(schedule(p, m, v))


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)

# %% [markdown] placement
# ~~ zh bcc35e56
# ## 1. 虚拟 stage：一个 rank，几段不相邻的层
#
# 1F1B 里 rank $r$ 持有连续的一段层。交错调度把模型切成 $vp$ 个 chunk，rank $r$ 按"发牌"的方式拿到第 $r, r+p, \dots$ 个。
# 下面用一个具体的模型看一看：`plan.placement[r]` 是 rank $r$ 持有的 stage（chunk）编号。
# ~~ en cd70b0b5
# ## 1. Virtual stages: one rank, several pieces of the model that are not neighbours
#
# In 1F1B rank $r$ holds one consecutive run of layers. The interleaved schedule cuts the model into $vp$ chunks and deals them out like cards: rank $r$ gets chunks $r, r+p, \dots$.
# Here is a concrete model; `plan.placement[r]` lists the stages (chunks) rank $r$ holds.

# %% [text] placement-route
# ~~ zh b038086b
# $p={p}$ 个 rank、$v={v}$、一共 {layers} 层：模型被切成 {chunks} 个 chunk，每个 {per_chunk} 层。rank 0 持有 stage {stages}，一个 micro-batch 的前向依次经过 rank {route}，在 {p} 个 rank 之间绕 {v} 圈。
# ~~ en 21884b52
# With $p={p}$ ranks, $v={v}$ and {layers} layers the model is cut into {chunks} chunks of {per_chunk} layers each. Rank 0 holds stages {stages}; one micro-batch's forward visits ranks {route} in turn, going round the {p} ranks {v} times.

# %%
p, m, v, layers = 4, 8, 2, 16
plan = build("interleaved", p, m, v=v)
per_chunk = layers // plan.num_stages
for r, stages in enumerate(plan.placement):
    spans = [f"layers {s * per_chunk}-{(s + 1) * per_chunk - 1}" for s in stages]
    print(f"rank {r}: stages {stages} -> {', '.join(spans)}")
md(text("placement-route", p=p, v=v, layers=layers, chunks=plan.num_stages, per_chunk=per_chunk,
        stages=list(plan.placement[0]), route=" → ".join(str(plan.rank_of_stage()[s]) for s in plan.routes[0])))

# %% [markdown] read-plan
# ~~ zh f8256db5
# 计划（plan）的文字形式和论文里的表格一样读：`F3.s4` 是 micro-batch 3 在 stage 4 上的前向。
# 看 rank 0 的前几步，再数一数每个 rank 在第一个反向之前做了几个前向：
# ~~ en eae93fe6
# A plan's text form reads like the tables in the papers: `F3.s4` is the forward of micro-batch 3 on stage 4.
# Look at rank 0's first steps, then count how many forwards each rank runs before its first backward:

# %% [text] warmup
# ~~ zh d2a68da8
# rank 0 先把 micro-batch 0..{last} 送过自己的第一个 chunk（stage {first_stage}），再把同一组送过第二个 chunk（stage {second_stage}），然后才轮到下一组：micro-batch 按 $p$ 个一组在 chunk 之间轮转，反向按同样的组、倒过来的 chunk 顺序走。各 rank 在第一个反向之前做的前向数是 {before}。Megatron 的预热是 $2(p-r-1)+(v-1)p$ 个前向，即 {warm}，再加上稳定阶段开头的那一个前向，正好是数出来的数（1F1B 的 rank 0 是 $p$ = {plain} 个）。前向多了，但每个只有 $1/v$ 的工作量。这两条（按 $p$ 个一组轮转；第一个反向之前 $\min(2(p-r-1)+(v-1)p,\ vm)+1$ 个前向，$m=p$ 时先做完全部 $vm$ 个）在 {checked} 个随机点上都成立（$p$ 取 1..8，$m=kp$、$k$ 取 1..4，$v$ 取 2..6）。
# ~~ en b36fa24f
# Rank 0 first sends micro-batches 0..{last} through its first chunk (stage {first_stage}), then the same group through its second chunk (stage {second_stage}), and only then the next group: micro-batches rotate through the chunks in groups of $p$, and the backwards follow the same groups with the chunks in reverse. The ranks run {before} forwards before their first backward. Megatron's warm-up is $2(p-r-1)+(v-1)p$ forwards, here {warm}; add the one forward that opens the steady state and you get exactly the counts above (1F1B's rank 0 runs $p$ = {plain}). More forwards, but each is only $1/v$ of the work. Both rules (rotation in groups of $p$; $\min(2(p-r-1)+(v-1)p,\ vm)+1$ forwards before the first backward, all $vm$ of them when $m=p$) hold at all {checked} random points checked ($p$ = 1..8, $m=kp$ with $k$ = 1..4, $v$ = 2..6).

# %%
print("rank 0:", " ".join(plan.rank_tokens(0)[:16]), "...")


def first_backward(steps):
    """How many steps a rank runs before its first backward."""
    return next(i for i, step in enumerate(steps) if ops_of(step)[0].kind != "F")


def megatron_warmup(p, m, v, r):
    """Megatron's warm-up forwards on rank r: every forward when m == p, else 2(p-r-1) + (v-1)p, at most vm."""
    return v * m if m == p else min(2 * (p - r - 1) + (v - 1) * p, v * m)


def rotation_rule(p, k, v):
    """Megatron's order: groups of p micro-batches through the chunks (backwards through them in reverse), and
    min(warm-up + 1, vm) forwards before the first backward."""
    m = k * p
    order = build("interleaved", p, m, v=v)
    for r, steps in enumerate(order.ranks):
        ops = [ops_of(step)[0] for step in steps]
        want_f = [(g * p + i, c * p + r) for g in range(k) for c in range(v) for i in range(p)]
        want_b = [(g * p + i, (v - 1 - c) * p + r) for g in range(k) for c in range(v) for i in range(p)]
        if ([(op.mb, op.stage) for op in ops if op.kind == "F"] != want_f
                or [(op.mb, op.stage) for op in ops if op.kind == "B"] != want_b
                or first_backward(steps) != min(megatron_warmup(p, m, v, r) + 1, v * m)):
            return False
    return True


rotation_sw = sweep(rotation_rule, {"p": (1, 8), "k": (1, 4), "v": (2, 6)}, n=40, seed=1)
before_first_b = [first_backward(steps) for steps in plan.ranks]
warmups = [megatron_warmup(p, m, v, r) for r in range(p)]
plain_before_b = first_backward(build("1f1b", p, m).ranks[0])
first_groups = [ops_of(step)[0].mb for step in plan.ranks[0][:2 * p]]   # micro-batches of rank 0's first 2p forwards
md(claim(plain_before_b == p and first_groups == list(range(p)) * 2
         and before_first_b == [w + 1 for w in warmups] and rotation_sw.holds,
         text("warmup", last=p - 1, first_stage=plan.placement[0][0], second_stage=plan.placement[0][1],
              before=before_first_b, warm=warmups, plain=plain_before_b, checked=rotation_sw.checked),
         before=before_first_b, warmups=warmups, **rotation_sw.figures()))

# %% [markdown] timeline
# ~~ zh 0f069928
# ## 2. 时间线：同样的 $m$，更短的灌满和排空
#
# 代价沿用前几章的默认值 `Costs()`：时间都指"一个 rank 那一份模型"，完整反向是库里的 `b + w`；
# 交错调度的一个 chunk 只花它的 $1/v$。
# ~~ en c8a42f3e
# ## 2. The timeline: the same $m$, a shorter fill and drain
#
# The costs are the earlier chapters' defaults, `Costs()`: every time is that of one rank's share of the model, and a full backward is the library's `b + w`;
# one chunk of the interleaved schedule takes $1/v$ of it.

# %% [text] chunk-costs
# ~~ zh 5be77312
# 前向 $F={f:g}$，完整反向 $B={backward:g}$；交错调度（$v={v}$）的一个 chunk 前向 {chunk_f:g}、反向 {chunk_b:g}。
# ~~ en b0ae7cd1
# A forward takes $F={f:g}$ and a full backward $B={backward:g}$; one chunk of the interleaved schedule ($v={v}$) takes {chunk_f:g} forward and {chunk_b:g} backward.

# %% [text] bubble-cell
# ~~ zh 597a4eca
# $p={p}, m={m}$：1F1B 的 makespan 是 **{one:g}**，bubble 占比 {one_bubble:.1%}；交错调度（$v={v}$）的 makespan 是 **{inter:g}**，bubble 占比 {inter_bubble:.1%}。公式 $(p-1)/(vm+p-1) = {num}/{den} = {formula:.1%}$，与模拟一致。每个 rank 的忙碌时间都是 {busy:g}：交错调度没有减少工作量，只减少了等待。
# ~~ en c8435d06
# $p={p}, m={m}$: 1F1B's makespan is **{one:g}** with a bubble fraction of {one_bubble:.1%}; the interleaved schedule ($v={v}$) takes **{inter:g}** with a bubble fraction of {inter_bubble:.1%}. The formula gives $(p-1)/(vm+p-1) = {num}/{den} = {formula:.1%}$, as simulated. Every rank is busy for {busy:g}: interleaving does not remove work, only waiting.

# %%
costs = Costs()  # default costs, no latency
backward = costs.b + costs.w
md(text("chunk-costs", f=costs.f, backward=backward, v=v, chunk_f=costs.f / v, chunk_b=backward / v))
one = simulate(build("1f1b", p, m), costs)
inter = simulate(plan, costs)
plots.compare([one, inter])
figure.show()
num, den = p - 1, v * m + p - 1
md(claim(close(inter.bubble_ratio, num / den) and inter.busy[0] == one.busy[0],
         text("bubble-cell", p=p, m=m, v=v, one=one.makespan, one_bubble=one.bubble_ratio, inter=inter.makespan,
              inter_bubble=inter.bubble_ratio, num=num, den=den, formula=num / den, busy=inter.busy[0]),
         simulated=inter.bubble_ratio, formula=num / den))

# %% [markdown] why-1-over-v
# ~~ zh 473d10de
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
# 换个读法：交错调度相当于把 micro-batch 数从 $m$ 变成 $vm$，却不用把 micro-batch 切小。下面对几个 $v$ 检查，再在随机的 $p$、$m$、$v$、$F$、$B$ 上检查：
# ~~ en 3761f61a
# ## 3. Why exactly $1/v$
#
# Let a rank's share of the model take $F$ forward and $B$ backward; one chunk then takes $F/v$ and $B/v$.
#
# - **Fill**: the first micro-batch's forward needs $p-1$ hand-overs between ranks before the last rank starts working, each leg $F/v$: $(p-1)F/v$ in all.
# - **Drain**: symmetrically, the last backward needs $p-1$ legs to get back to rank 0: $(p-1)B/v$.
# - **Steady state**: each rank must run all $v$ chunks of all $m$ micro-batches, $m(F+B)$ in total, whatever $v$ is.
#
# So the makespan is $m(F+B) + (p-1)(F+B)/v$ and the bubble fraction
# $$\frac{(p-1)(F+B)/v}{m(F+B) + (p-1)(F+B)/v} = \frac{p-1}{vm+p-1}.$$
# Read it another way: interleaving acts as if the number of micro-batches went from $m$ to $vm$, without making the micro-batches any smaller. The check below covers a few values of $v$, then random $p$, $m$, $v$, $F$ and $B$:

# %% [text] v-table-head
# ~~ zh 0fa66d6b
# | v | makespan（模拟） | $m(F+B) + (p-1)(F+B)/v$ | bubble（模拟） | $(p-1)/(vm+p-1)$ |
# |---|---|---|---|---|
# ~~ en 8a7dec28
# | v | makespan (simulated) | $m(F+B) + (p-1)(F+B)/v$ | bubble (simulated) | $(p-1)/(vm+p-1)$ |
# |---|---|---|---|---|

# %% [text] megatron-measure
# ~~ zh 96c97cab
# 表里每一行，模拟都和公式一致；在 {checked} 个随机点上（$p$ 取 2..8，$m=kp$、$k$ 取 1..4，$v$ 取 2..6，$F$ 取 0.5..2，完整反向 $B$ 取 0.5..4）也是这样：makespan 正好是 $m(F+B)+(p-1)(F+B)/v$，每个 rank 都忙 $m(F+B)$。Megatron 的论文按第 1 章的理想时间口径写：bubble 时间 / 理想时间 $= \frac{{1}}{{v}}\cdot\frac{{p-1}}{{m}}$。同一张表用这个口径读：{ratios}，正好是 $(p-1)/(vm)$；两种口径都是把 $m$ 换成 $vm$。
# ~~ en e62be94f
# Every row of the table agrees with the formula, and so do all {checked} random points checked ($p$ = 2..8, $m=kp$ with $k$ = 1..4, $v$ = 2..6, $F$ in [0.5, 2], full backward $B$ in [0.5, 4]): the makespan is exactly $m(F+B)+(p-1)(F+B)/v$ and every rank is busy for $m(F+B)$. Megatron's paper uses chapter 1's measure against the ideal time: bubble time / ideal time $= \frac{{1}}{{v}}\cdot\frac{{p-1}}{{m}}$. Read the same table that way: {ratios}, exactly $(p-1)/(vm)$. Both measures amount to replacing $m$ with $vm$.

# %%
rows = []
by_v = {}
for vv in (1, 2, 4):
    tl = simulate(schedule(p, m, vv), costs)
    by_v[vv] = tl
    closed = (m + (p - 1) / vv) * (costs.f + backward)
    rows.append(f"| {vv} | {tl.makespan:g} | {closed:g} | {tl.bubble_ratio:.2%} | {(p - 1) / (vv * m + p - 1):.2%} |")
md(text("v-table-head") + "\n" + "\n".join(rows))


def bubble_rule(p, k, v, f, backward):
    """Interleaved 1F1B: makespan m(F+B) + (p-1)(F+B)/v, bubble (p-1)/(vm+p-1), every rank busy m(F+B)."""
    m = k * p
    tl = compiled(p, m, v).simulate(Costs(f=f, b=backward, w=0.0))
    return (close(tl.makespan, (m + (p - 1) / v) * (f + backward))
            and close(tl.bubble_ratio, (p - 1) / (v * m + p - 1))
            and all(close(busy, m * (f + backward)) for busy in tl.busy))


bubble_sw = sweep(bubble_rule, {"p": (2, 8), "k": (1, 4), "v": (2, 6), "f": (0.5, 2.0), "backward": (0.5, 4.0)},
                  n=100, seed=2)
megatron_v = {vv: (tl.makespan - tl.busy[0]) / tl.busy[0] for vv, tl in by_v.items()}   # bubble time / ideal time
md(claim(all(close(tl.bubble_ratio, (p - 1) / (vv * m + p - 1)) for vv, tl in by_v.items())
         and all(close(x, (p - 1) / (vv * m)) for vv, x in megatron_v.items()) and bubble_sw.holds,
         text("megatron-measure", checked=bubble_sw.checked,
              ratios=", ".join(f"$v={vv}$: {x:.3f}" for vv, x in megatron_v.items())),
         megatron_v=megatron_v, **bubble_sw.figures()))

# %% [markdown] messages-intro
# ~~ zh 3800322c
# ## 4. 代价一：点对点通信乘以 $v$
#
# 一个 micro-batch 每跨过一个 chunk 边界，就要把激活（反向时是梯度）发给下一个 rank。1F1B 有 $p-1$ 个边界，
# 交错调度有 $vp-1$ 个——相邻的 chunk 总在不同的 rank 上。
# ~~ en 954d4fd9
# ## 4. Cost one: point-to-point traffic times $v$
#
# Every time a micro-batch crosses a chunk boundary, its activation (its gradient, going backward) is sent to the next rank. 1F1B has $p-1$ boundaries;
# the interleaved schedule has $vp-1$, because neighbouring chunks always sit on different ranks.

# %% [markdown] predict-messages
# ~~ zh f71c0e77
# **预测：** $v=2$ 时，一次迭代的点对点消息数是 1F1B 的多少倍？（写成小数）
# ~~ en fe04ca63
# **Predict:** with $v=2$, how many times as many point-to-point messages as 1F1B does one iteration need? (Write a decimal number.)

# %%
guess_messages = None   # your prediction

# %% [markdown] count-messages
# ~~ zh cd2d5362
# 数一数计划里"依赖的生产者在另一个 rank 上"的次数：
# ~~ en b40aba59
# Count how often, in the plan, an operation depends on one that runs on another rank:

# %% [text] messages
# ~~ zh 474d3f89
# 每次迭代的点对点消息数（前向加反向）：{counts}。$v={v}$ 时是 1F1B 的 {ratio:.2f} 倍，正是 $(vp-1)/(p-1) = {top}/{bottom}$；消息大小不变，所以字节数也是这个倍数。一般地，消息数是 $2m(vp-1)$（1F1B 是 $2m(p-1)$），在 {checked} 个随机点上都成立（$p$ 取 2..8，$m=kp$、$k$ 取 1..4，$v$ 取 1..6）。
# ~~ en 6badcbf5
# Point-to-point messages per iteration (forward and backward): {counts}. With $v={v}$ that is {ratio:.2f} times 1F1B's, exactly $(vp-1)/(p-1) = {top}/{bottom}$; each message is as large as before, so the bytes grow by the same factor. In general there are $2m(vp-1)$ messages ($2m(p-1)$ for 1F1B), at all {checked} random points checked ($p$ = 2..8, $m=kp$ with $k$ = 1..4, $v$ = 1..6).

# %%
def transfers(plan) -> int:
    """Point-to-point messages one iteration needs: dependencies whose producer sits on another rank."""
    rank_of = plan.rank_of_stage()
    return sum(1 for r, steps in enumerate(plan.ranks) for step in steps for op in ops_of(step)
               for dep in plan.dependencies(op) if rank_of[dep.stage] != r)


def messages_rule(p, k, v):
    """One iteration sends 2m(vp-1) messages (v = 1: 1F1B's 2m(p-1))."""
    return transfers(schedule(p, k * p, v)) == 2 * k * p * (v * p - 1)


messages_sw = sweep(messages_rule, {"p": (2, 8), "k": (1, 4), "v": (1, 6)}, n=50, seed=3)
counts = {vv: transfers(schedule(p, m, vv)) for vv in (1, 2, 4)}
md(reveal(guess_messages, counts[v] / counts[1], claim(
    all(close(counts[vv] / counts[1], (vv * p - 1) / (p - 1)) for vv in counts) and messages_sw.holds,
    text("messages", counts=", ".join(f"$v={vv}$: **{c}**" for vv, c in counts.items()), v=v,
         ratio=counts[v] / counts[1], top=v * p - 1, bottom=p - 1, checked=messages_sw.checked),
    counts=counts, **messages_sw.figures())))

# %% [markdown] latency-intro
# ~~ zh 53d10980
# 这些消息各自带一段延迟。给每次跨 rank 传输加上延迟 `comm`（记作 $c$，单位与 $F$ 相同），看交错调度的优势还剩多少。
# ~~ en 1f3ec143
# Each of these messages comes with a latency. Give every transfer between ranks a latency `comm` (written $c$, in the same units as $F$) and see how much of the interleaved schedule's advantage is left.

# %% [markdown] predict-crossover
# ~~ zh 7d54cc07
# **预测：** 延迟为零时 $v=4$ 比 $v=2$ 快。`comm` 从 0 起依次取 0.1、0.25、0.5、1，到哪一个值时 $v=4$ 第一次不比 $v=2$ 快？
# ~~ en ae9a1bd2
# **Predict:** without latency $v=4$ is faster than $v=2$. As `comm` goes from 0 through 0.1, 0.25, 0.5 and 1, at which value is $v=4$ no longer faster than $v=2$ for the first time?

# %%
guess_crossover = None   # 0.1, 0.25, 0.5 or 1

# %% [text] latency-table
# ~~ zh dd51ab7d
# makespan（$p={p}, m={m}$，F={f:g}，完整反向 {backward:g}）：
# ~~ en b353d061
# Makespan ($p={p}, m={m}$, F = {f:g}, full backward {backward:g}):

# %% [text] crossover
# ~~ zh 58555764
# 延迟为零时 $v$ 越大越快；`comm` $\ge {crossover:g}$ 时 $v=4$ 已经不比 $v=2$ 快。原因可以算出来：一个 micro-batch 从第一个 chunk 走到最后一个要跨 $vp-1$ 个 chunk 边界，每个边界都在两个 rank 之间，所以灌满多付 $(vp-1)c$，排空也一样；稳定阶段把延迟藏住了。只要 $c \le \min(F,B)/v$（不超过一个 chunk 上较短的那个操作），makespan 就正好是 $m(F+B) + (p-1)(F+B)/v + 2(vp-1)c$：在 {checked} 个随机点上都成立（$p$ 取 2..8，$m=kp$、$k$ 取 1..4，$v$ 取 2..6，$F$ 取 0.5..2，$B$ 取 0.5..4，$c$ 取 0..$\min(F,B)/v$）。这个界限是紧的：$v={v}$ 时 $\min(F,B)/v$ = {bound:g}，$c$ 取 {above:g} 时模拟的 {sim_above:g} 已经比公式的 {formula_above:g} 长，稳定阶段也开始付延迟。这里每次传输的延迟都算在关键路径上；Megatron 把点对点通信和计算重叠起来，真实系统里交叉点会往后挪。
# ~~ en 387169bb
# Without latency a larger $v$ is faster; from `comm` $\ge {crossover:g}$ on, $v=4$ is no faster than $v=2$. The reason can be computed: on its way from the first chunk to the last, a micro-batch crosses $vp-1$ chunk boundaries, each between two ranks, so the fill pays $(vp-1)c$ more, and the drain as much; the steady state hides the latency. As long as $c \le \min(F,B)/v$ (at most one chunk's shorter operation), the makespan is exactly $m(F+B) + (p-1)(F+B)/v + 2(vp-1)c$, at all {checked} random points checked ($p$ = 2..8, $m=kp$ with $k$ = 1..4, $v$ = 2..6, $F$ in [0.5, 2], $B$ in [0.5, 4], $c$ from 0 to $\min(F,B)/v$). The bound is tight: with $v={v}$, $\min(F,B)/v$ = {bound:g}, and at $c$ = {above:g} the simulated {sim_above:g} is already longer than the formula's {formula_above:g}: the steady state starts paying latency too. Here every transfer's latency sits on the critical path; Megatron overlaps point-to-point communication with computation, which moves the crossover later in a real system.

# %%
comms = (0.0, 0.1, 0.25, 0.5, 1.0)
lat_spans = {comm: {vv: simulate(schedule(p, m, vv), Costs(comm=comm)).makespan for vv in (1, 2, 4)} for comm in comms}
crossover = next((comm for comm in comms if lat_spans[comm][4] >= lat_spans[comm][2]), None)
lat_rows = ["| comm | " + " | ".join(f"v={vv}" for vv in (1, 2, 4)) + " |", "|---" * 4 + "|"]
lat_rows += [f"| {comm:g} | " + " | ".join(f"{spans[vv]:g}" for vv in (1, 2, 4)) + " |" for comm, spans in lat_spans.items()]
md(text("latency-table", p=p, m=m, f=costs.f, backward=backward) + "\n\n" + "\n".join(lat_rows))


def latency_formula(p, m, v, f, backward, c):
    return (m + (p - 1) / v) * (f + backward) + 2 * (v * p - 1) * c


def latency_rule(p, k, v, f, backward, share):
    """With a latency c up to min(F, B)/v, only the fill and the drain pay it: 2(vp-1)c on top of the makespan."""
    c = share * min(f, backward) / v
    got = compiled(p, k * p, v).simulate(Costs(f=f, b=backward, w=0.0, comm=c)).makespan
    return close(got, latency_formula(p, k * p, v, f, backward, c))


latency_sw = sweep(latency_rule, {"p": (2, 8), "k": (1, 4), "v": (2, 6), "f": (0.5, 2.0), "backward": (0.5, 4.0),
                                  "share": (0.0, 1.0)}, n=150, seed=4)
bound = min(costs.f, backward) / v
above = 1.02 * bound
sim_above = simulate(plan, Costs(comm=above)).makespan
formula_above = latency_formula(p, m, v, costs.f, backward, above)
md(reveal(guess_crossover, crossover, claim(
    crossover is not None and crossover > 0 and latency_sw.holds and sim_above > formula_above + 1e-9
    and close(lat_spans[0.25][2], latency_formula(p, m, 2, costs.f, backward, 0.25)),
    text("crossover", crossover=crossover, checked=latency_sw.checked, v=v, bound=bound, above=above,
         sim_above=sim_above, formula_above=formula_above),
    crossover=crossover, sim_above=sim_above, formula_above=formula_above, **latency_sw.figures())))

# %% [markdown] memory-intro
# ~~ zh b01fd301
# ## 5. 代价二：预热阶段多存的激活
#
# 内存按"一个 micro-batch 在一个 rank 那一份模型上的激活"计（1F1B 的 rank 0 峰值是 $p$）。交错调度的一个 chunk 只存 $1/v$ 份，
# 但预热阶段做了更多前向。
# ~~ en 34fde9f5
# ## 5. Cost two: the activations the warm-up stores
#
# Memory is counted in units of one micro-batch's activations on one rank's share of the model (1F1B's rank 0 peaks at $p$). One chunk of the interleaved schedule stores only $1/v$ of a unit,
# but the warm-up runs more forwards.

# %% [markdown] predict-peaks
# ~~ zh b9f195ec
# **预测：** $p=4$、$m=8$ 时，1F1B 的 rank 0 峰值是 4 份。交错调度 $v=2$ 和 $v=4$ 时 rank 0 的峰值各是多少份？$v=4$ 比 $v=2$ 多还是少？写成 `[v=2 的峰值, v=4 的峰值]`。
# ~~ en 96ffe95c
# **Predict:** with $p=4$ and $m=8$, 1F1B's rank 0 peaks at 4 units. What are rank 0's peaks with $v=2$ and with $v=4$, and does $v=4$ need more or less than $v=2$? Write `[peak at v=2, peak at v=4]`.

# %%
guess_peaks = None   # e.g. [5, 6]

# %% [text] peaks
# ~~ zh fe3171be
# 各 rank 的激活峰值：{peaks}。rank 0 从 {one:g}（1F1B）变成 {v2:g}（$v=2$）和 {v4:g}（$v=4$）：$v=4$ 比 $v=2$ **{direction}**。rank $r$ 在第一个反向之前存着 $2(p-r-1)+(v-1)p+1$ 个 chunk 的激活，每个 $1/v$ 份，合起来是 $p + (p-1-2r)/v$ 份；之后一个前向一个反向交替，份数不再增加。rank 0 比 1F1B 多存 $(p-1)/v$ 份，$v$ 越大多得越少：激活显存不是限制 $v$ 的理由。$p + (p-1-2r)/v$ 在 {checked} 个随机点上都是每个 rank 的峰值（$p$ 取 2..8，$m=kp$、$k$ 取 2..4，$v$ 取 2..6）；$m=p$ 时先做完全部前向，每个 rank 的峰值是 $p$。
# ~~ en 3eceaeec
# Each rank's activation peak: {peaks}. Rank 0 goes from {one:g} (1F1B) to {v2:g} ($v=2$) and {v4:g} ($v=4$): $v=4$ needs **{direction}** than $v=2$. Before its first backward rank $r$ holds the activations of $2(p-r-1)+(v-1)p+1$ chunks, $1/v$ of a unit each, $p + (p-1-2r)/v$ units in all; after that one forward and one backward alternate, and the count grows no further. Rank 0 stores $(p-1)/v$ more than in 1F1B, and the larger $v$, the less: activation memory is no reason to keep $v$ small. $p + (p-1-2r)/v$ is every rank's peak at all {checked} random points checked ($p$ = 2..8, $m=kp$ with $k$ = 2..4, $v$ = 2..6); with $m=p$ every forward runs first and every rank peaks at $p$.

# %% [text] direction-less
# ~~ zh 62f99c9a
# 少
# ~~ en 4fdd3b62
# less

# %% [text] direction-more
# ~~ zh 1940119f
# 多
# ~~ en 187897ce
# more

# %%
def peak_formula(p, v, r):
    return p + (p - 1 - 2 * r) / v


def peak_rule(p, k, v):
    """Megatron's interleaved 1F1B with m >= 2p: rank r peaks at p + (p-1-2r)/v micro-batches."""
    peaks = compiled(p, k * p, v).simulate(Costs()).peak_activations
    return all(close(x, peak_formula(p, v, r)) for r, x in enumerate(peaks))


peak_sw = sweep(peak_rule, {"p": (2, 8), "k": (2, 4), "v": (2, 6)}, n=80, seed=5)
peaks = {vv: tl.peak_activations for vv, tl in by_v.items()}
direction = text("direction-less" if peaks[4][0] < peaks[2][0] else "direction-more")
md(reveal(guess_peaks, [peaks[2][0], peaks[4][0]], claim(
    peaks[2][0] > peaks[4][0] > peaks[1][0] and peak_sw.holds
    and all(close(x, peak_formula(p, vv, r)) for vv in (2, 4) for r, x in enumerate(peaks[vv])),
    text("peaks", peaks="; ".join(f"$v={vv}$: {[round(x, 3) for x in pk]}" for vv, pk in peaks.items()),
         one=peaks[1][0], v2=peaks[2][0], v4=peaks[4][0], direction=direction, checked=peak_sw.checked),
    peaks=peaks, **peak_sw.figures())))
for vv in (2, 4):   # the library's closed form says the same
    assert list(formulas.predict("interleaved", p, m, costs, v=vv).peak_activations) == peaks[vv]
plots.compare([by_v[1], by_v[2]], memory_too=True)
figure.show()

# %% [markdown] divisibility
# ~~ zh 11170d8f
# ## 6. 整除约束，以及 torch 怎样放宽它
#
# Megatron 的经典顺序让 rank 按 $p$ 个 micro-batch 一组在 chunk 之间轮转，$m$ 不是 $p$ 的倍数时最后一组不完整。本库的 `interleaved` 实现的是这个经典版本，会给出一行清楚的错误：
# ~~ en 32212ce2
# ## 6. The divisibility constraint, and how torch relaxes it
#
# Megatron's classic order rotates micro-batches through the chunks in groups of $p$, so when $m$ is not a multiple of $p$ the last group is incomplete. The library's `interleaved` implements that classic version and says so in one line:

# %%
for bad_m in (6, 3):
    try:
        build("interleaved", p, bad_m, v=v)
    except ValueError as err:
        print(f"m={bad_m}: {err}")

# %% [markdown] flex-rule
# ~~ zh 536fb385
# 这不是交错调度本身的限制。torch 的 `ScheduleInterleaved1F1B`（第 8 节拿来对照的正是这个类）用了 Llama 3 训练时的放宽版（`flex_pp`）：
# 轮数 $R = \max(1, \lfloor m/p \rfloor)$，每组 $m/R$ 个 micro-batch，只要求 $m$ 能被 $R$ 整除。组里的 micro-batch 多于 $p$ 时，预热也要多做前向。
# 本库的 `interleaved-flex` 按同样的规则排。下一格请 torch 排出 $m = 1, 2, \dots$ 的顺序，再在随机的 $p$、$v$、$m$ 上请它排（有 torch 时实时问它；没有 torch 时，比如浏览器版，显示录制的回答）：
# ~~ en 0a7b9b7b
# That is not a limit of interleaving as such. torch's `ScheduleInterleaved1F1B` (the class section 8 compares with) uses the relaxed version of Llama 3's training (`flex_pp`):
# $R = \max(1, \lfloor m/p \rfloor)$ rounds of $m/R$ micro-batches each, which only needs $m$ to be a multiple of $R$. When a group holds more than $p$ micro-batches, the warm-up runs more forwards too.
# The library's `interleaved-flex` follows the same rule. The next cell has torch order $m = 1, 2, \dots$, and then random $p$, $v$ and $m$ (asked live where torch is installed; without torch, as in the browser edition, the recorded answers):

# %%
from course import recordings
from course.recordings.cases import CH4_FLEX_SWEEP, plan_digest

# torch's orders through course.torch_bridge.torch_plan (course/recordings/cases.py:torch_orders): asked live where
# torch is installed; without torch (the browser edition) the recorded answers.
torch_orders = recordings.run("torch-interleaved-orders")


def torch_or_refusal(p, m, v):
    """torch's ScheduleInterleaved1F1B as a Plan, or the first line of the error it refuses (p, m, v) with."""
    return torch_orders["plans"]["ScheduleInterleaved1F1B", p, m, v]


def flex_is_torch(p, v, m):
    """interleaved-flex refuses exactly the m torch refuses, and orders every other m op for op as torch does."""
    theirs = torch_orders["digests"]["ScheduleInterleaved1F1B", p, m, v]   # plan_digest of torch's order, or its refusal
    try:
        ours = build("interleaved-flex", p, m, v=v)
    except ValueError:
        return not theirs.startswith("sha256:")
    return theirs == plan_digest(ours)       # the same order and placement


torch_flex = {mm: torch_or_refusal(p, mm, v) for mm in range(1, 3 * p + 1)}
torch_sw = sweep(flex_is_torch, **CH4_FLEX_SWEEP)      # {"p": (2, 8), "v": (2, 4), "m": (1, 32)}, n=100, seed=6

# %% [text] flex-head
# ~~ zh 604d7faa
# $p={p}$、$v={v}$：
#
# | m | 组大小 | bubble | rank 0 峰值 | 与 torch 的顺序相同 |
# |---|---|---|---|---|
# ~~ en 2e43bb26
# $p={p}$, $v={v}$:
#
# | m | group size | bubble | rank 0 peak | same order as torch |
# |---|---|---|---|---|

# %% [text] flex-refused
# ~~ zh af53b381
# 拒绝：{m} 不能被 {rounds} 轮整除（torch 也拒绝）
# ~~ en 37322936
# refused: {m} is not a multiple of its {rounds} rounds (torch refuses it too)

# %% [text] flex-same
# ~~ zh 00904c23
# torch 接受的每一个 $m$（这里 {accepted} 个），两边的顺序逐个算子相同，torch 拒绝的 $m$ 本库也拒绝；在 {checked} 个随机点上（$p$ 取 2..8，$v$ 取 2..4，$m$ 取 1..32）也是这样。torch 接受而 $m \ge p$ 时，bubble 仍是 $(p-1)/(vm+p-1)$；$m$ 是 $p$ 的倍数且大于 $p$ 时，它和 Megatron 的经典顺序逐个算子相同（两条在 {checked_flex} 个随机点上都成立，$p$ 取 2..8，$v$ 取 2..6，$m$ 取 $p$..$4p$ 中 torch 接受的值，$F$ 取 0.5..2，$B$ 取 0.5..4）。代价在显存：组比 $p$ 大时预热做了更多前向，例如 $m={m_odd}$（组大小 {g_odd}）时 rank 0 的峰值是 {peak_odd:g} 份，比 $m={m_even}$ 的 {peak_even:g} 份还多。多多少，是练习 `interleaved-memory` 要你推出来的。
# ~~ en 425dc3c0
# For every $m$ torch accepts ({accepted} of them here) the two orders are identical op for op, and every $m$ torch refuses the library refuses too; the same holds at all {checked} random points checked ($p$ = 2..8, $v$ = 2..4, $m$ = 1..32). For the $m \ge p$ torch accepts, the bubble is still $(p-1)/(vm+p-1)$, and when $m$ is a multiple of $p$ above $p$ the order is Megatron's classic one op for op (both at all {checked_flex} random points checked: $p$ = 2..8, $v$ = 2..6, the $m$ in $p$..$4p$ that torch accepts, $F$ in [0.5, 2], $B$ in [0.5, 4]). The price is memory: a group larger than $p$ runs more forwards in the warm-up; with $m={m_odd}$ (groups of {g_odd}) rank 0 peaks at {peak_odd:g} units, more than the {peak_even:g} of $m={m_even}$. How much more in general is what exercise `interleaved-memory` asks you to derive.

# %%
def rounds(m, p):
    return max(1, m // p)


flex_rows, flex_same = [], []
for mm, theirs in torch_flex.items():
    if isinstance(theirs, str):
        flex_rows.append(f"| {mm} | — | — | — | {text('flex-refused', m=mm, rounds=rounds(mm, p))} |")
        continue
    ours = build("interleaved-flex", p, mm, v=v)
    flex_same.append(theirs.format() == ours.format() and theirs.placement == ours.placement)
    tl = simulate(ours, costs)
    flex_rows.append(f"| {mm} | {mm // rounds(mm, p)} | {tl.bubble_ratio:.1%} | {tl.peak_activations[0]:g} | "
                     f"{'✓' if flex_same[-1] else '✗'} |")
md(text("flex-head", p=p, v=v) + "\n" + "\n".join(flex_rows))


def flex_rule(p, v, x, f, backward):
    """interleaved-flex with m >= p: bubble (p-1)/(vm+p-1); Megatron's order op for op when p divides m > p."""
    m = int(p * x)
    while m % rounds(m, p):     # the nearest m at or below p * x that torch accepts
        m -= 1
    ours = build("interleaved-flex", p, m, v=v)
    tl = simulate(ours, Costs(f=f, b=backward, w=0.0))
    same = m % p or m == p or ours.format() == build("interleaved", p, m, v=v).format()
    return bool(same) and close(tl.bubble_ratio, (p - 1) / (v * m + p - 1))


flex_sw = sweep(flex_rule, {"p": (2, 8), "v": (2, 6), "x": (1.0, 4.0), "f": (0.5, 2.0), "backward": (0.5, 4.0)},
                n=80, seed=7)
m_odd, m_even = 2 * p - 1, 2 * p
flex_peak = {mm: simulate(build("interleaved-flex", p, mm, v=v)).peak_activations[0] for mm in (m_odd, m_even)}
md(claim(torch_sw.holds and flex_sw.holds and flex_same and all(flex_same) and flex_peak[m_odd] > flex_peak[m_even],
         text("flex-same", accepted=len(flex_same), checked=torch_sw.checked, checked_flex=flex_sw.checked,
              m_odd=m_odd, g_odd=m_odd // rounds(m_odd, p), peak_odd=flex_peak[m_odd], m_even=m_even,
              peak_even=flex_peak[m_even]),
         same=flex_same, peaks=flex_peak, torch=torch_sw.figures(), **flex_sw.figures()))

# %% [markdown] widget-intro
# ~~ zh 3563d4b8
# 另外两条整除约束在库外面：模型的层数要能被 $vp$ 整除（否则 chunk 不等长，负载不均衡），
# 全局 batch 要能切成 $m$ 个等大的 micro-batch。
#
# ## 7. 自己动手：拖动 $v$
#
# 上面是 1F1B，下面是同样 $p$、$m$、延迟下的交错调度。`m_per_p` 是 $m/p$（保证整除）。
# 留意：$v$ 增大时灌满的斜坡变陡；`comm` 增大时，$v$ 越大，下面那张图拉长得越快（每多切一次，灌满和排空各多 $p$ 次传输）。
# ~~ en f9815575
# Two more divisibility constraints live outside the library: the number of layers must be a multiple of $vp$ (otherwise the chunks differ in length and the load is uneven),
# and the global batch must split into $m$ equal micro-batches.
#
# ## 7. Try it: drag $v$
#
# On top is 1F1B, below it the interleaved schedule with the same $p$, $m$ and latency. `m_per_p` is $m/p$ (which keeps $m$ a multiple of $p$).
# Watch the ramp of the fill steepen as $v$ grows; as `comm` grows, the lower chart stretches the faster the larger $v$ is (every extra cut adds $p$ transfers to the fill and $p$ to the drain).

# %%
def interleaved_vs_1f1b(fig, p, m_per_p, v, comm):
    m = p * m_per_p
    c = Costs(comm=comm)
    base = simulate(build("1f1b", p, m), c)
    tl = simulate(schedule(p, m, v), c)
    top, bottom = fig.subplots(2, 1, sharex=True)
    plots.gantt(base, ax=top, labels=False)
    plots.gantt(tl, ax=bottom, labels=False,
                title=f"interleaved v={v}: makespan {tl.makespan:.4g}, bubble {tl.bubble_ratio:.1%} "
                      f"(formula {(p - 1) / (v * m + p - 1):.1%} at comm=0)")
    bottom.set_xlim(0, max(base.makespan, tl.makespan))


explore(interleaved_vs_1f1b, figsize=(10, 4.5), p=(2, 6, 4), m_per_p=(1, 4, 2), v=(1, 4, 2),
        comm=(0.0, 1.0, 0.0, 0.05))

# %% [markdown] task-best-v
# ~~ zh dd9c2f63
# **任务：** 保持 `p=4`、`m_per_p=2`，把 `comm` 调到 0.25，拖动 `v`（1 到 4）：哪个 $v$ 的 makespan 最短？
# ~~ en 9756ab0e
# **Task:** keep `p=4` and `m_per_p=2`, set `comm` to 0.25 and drag `v` from 1 to 4: which $v$ gives the shortest makespan?

# %%
answer_best_v = None   # 1, 2, 3 or 4

# %% [text] best-v
# ~~ zh aa683864
# comm={comm:g} 时各 $v$ 的 makespan：{spans}。最好的是 $v={best}$。第 4 节的公式说明了为什么：从 $v$ 加到 $v+1$，灌满和排空省下 $(p-1)(F+B)\left(\frac{{1}}{{v}}-\frac{{1}}{{v+1}}\right) = \frac{{(p-1)(F+B)}}{{v(v+1)}}$，却多出 $p$ 个 chunk 边界，来回各付一次延迟，共 $2pc$。所以多切一次只在 $v(v+1) < \frac{{(p-1)(F+B)}}{{2pc}}$ 时划算，最好的 $v$ 约为 $\sqrt{{(p-1)(F+B)/(2pc)}}$，和 $m$ 无关。这里 $\frac{{(p-1)(F+B)}}{{2pc}} = {x:.3g}$，规则给出 $v={rule}$。延迟越小，最好的 $v$ 越大：`comm` = {low:g} 时规则给出 $v={rule_low}$，滑块上最好的是 $v={best_low}$（最右端）；`comm` = {mid:g} 时是 $v={best_mid}$。这条规则（$v \ge 2$ 时多切一次划算当且仅当 $v(v+1) < (p-1)(F+B)/(2pc)$；$v=1$ 的 1F1B 从来不比它选的 $v$ 快）在 {checked} 个随机点上都给出了模拟里最快的 $v$（$v$ 取 1..4，$p$ 取 2..8，$m=kp$、$k$ 取 1..4，$F$ 取 0.5..2，$B$ 取 0.5..4，$c$ 取 0..$\min(F,B)/4$，即第 4 节的公式对每个 $v$ 都成立的范围）。延迟再大，稳定阶段也要付延迟，公式只是下界。
# ~~ en c7120240
# Makespans at comm = {comm:g}: {spans}. The best is $v={best}$. Section 4's formula says why: going from $v$ to $v+1$ saves $(p-1)(F+B)\left(\frac{{1}}{{v}}-\frac{{1}}{{v+1}}\right) = \frac{{(p-1)(F+B)}}{{v(v+1)}}$ of fill and drain, but adds $p$ chunk boundaries, each paying the latency once on the way in and once on the way out: $2pc$. So one more cut pays off only while $v(v+1) < \frac{{(p-1)(F+B)}}{{2pc}}$, the best $v$ is about $\sqrt{{(p-1)(F+B)/(2pc)}}$, and $m$ does not enter. Here $\frac{{(p-1)(F+B)}}{{2pc}} = {x:.3g}$, and the rule gives $v={rule}$. The lower the latency, the larger the best $v$: at `comm` = {low:g} the rule gives $v={rule_low}$, and the best on the slider is $v={best_low}$ (its right end); at `comm` = {mid:g} it is $v={best_mid}$. This rule (for $v \ge 2$ one more cut pays off exactly when $v(v+1) < (p-1)(F+B)/(2pc)$; $v=1$, plain 1F1B, is never faster than the $v$ it picks) picked the fastest simulated $v$ at all {checked} random points checked ($v$ = 1..4, $p$ = 2..8, $m=kp$ with $k$ = 1..4, $F$ in [0.5, 2], $B$ in [0.5, 4], $c$ from 0 to $\min(F,B)/4$, the range where section 4's formula holds for every $v$). Beyond it the steady state pays latency too, and the formula is only a lower bound.

# %%
TASK_P, TASK_M, TASK_COMM, TOP_V = 4, 8, 0.25, 4


def rule_v(p, f, backward, c, top):
    """The v in 2..top past which one more chunk stops paying: the first v with v(v+1) >= (p-1)(F+B)/(2pc)."""
    vv = 2
    while vv < top and vv * (vv + 1) * 2 * p * c < (p - 1) * (f + backward):
        vv += 1
    return vv


def spans_by_v(p, m, f, backward, c, top=TOP_V):
    return {vv: compiled(p, m, vv).simulate(Costs(f=f, b=backward, w=0.0, comm=c)).makespan for vv in range(1, top + 1)}


def best_v_rule(p, k, f, backward, share):
    """The rule's v is the fastest of v = 1..TOP_V (plain 1F1B included) when c <= min(F, B)/TOP_V."""
    c = share * min(f, backward) / TOP_V
    spans = spans_by_v(p, k * p, f, backward, c)
    return spans[rule_v(p, f, backward, c, TOP_V)] <= min(spans.values()) * (1 + 1e-12)


def fastest(spans):
    return min(spans, key=spans.get)


best_v_sw = sweep(best_v_rule, {"p": (2, 8), "k": (1, 4), "f": (0.5, 2.0), "backward": (0.5, 4.0),
                                "share": (0.0, 1.0)}, n=150, seed=8)
task_spans = spans_by_v(TASK_P, TASK_M, costs.f, backward, TASK_COMM)
best_v = fastest(task_spans)
task_rule = rule_v(TASK_P, costs.f, backward, TASK_COMM, TOP_V)
low, mid = 0.05, 0.1
best_low = fastest(spans_by_v(TASK_P, TASK_M, costs.f, backward, low))
best_mid = fastest(spans_by_v(TASK_P, TASK_M, costs.f, backward, mid))
rule_low = rule_v(TASK_P, costs.f, backward, low, 2 * TOP_V)
md(reveal(answer_best_v, best_v, claim(
    best_v_sw.holds and best_v == task_rule and best_low == TOP_V < rule_low
    and best_mid == rule_v(TASK_P, costs.f, backward, mid, TOP_V),
    text("best-v", comm=TASK_COMM, spans=", ".join(f"$v={vv}$: {x:.4g}" for vv, x in task_spans.items()), best=best_v,
         x=(TASK_P - 1) * (costs.f + backward) / (2 * TASK_P * TASK_COMM), rule=task_rule,
         low=low, rule_low=rule_low, best_low=best_low, mid=mid, best_mid=best_mid, checked=best_v_sw.checked),
    spans=task_spans, best_low=best_low, best_mid=best_mid, **best_v_sw.figures())))

# %% [markdown] torch-compare
# ~~ zh 24200bce
# ## 8. 和 torch.distributed.pipelining 对照
#
# PyTorch 自带的 `ScheduleInterleaved1F1B` 也实现了 Megatron 的交错顺序（$m$ 是 $p$ 的倍数时就是经典版本，见第 6 节）。`course.torch_bridge` 不建进程组、不建模型，
# 只把它排出的 `pipeline_order` 翻译成本库的 `Plan`，于是可以逐个算子比较，并放进同一个模拟器。下一格取出 torch 排出的这个顺序和第二种交错顺序（广度优先，见下文），两者都已在前面请 torch 排序的那一格里问过：
# ~~ en 43788537
# ## 8. Side by side with torch.distributed.pipelining
#
# PyTorch's own `ScheduleInterleaved1F1B` implements Megatron's interleaved order as well (the classic version when $m$ is a multiple of $p$, see section 6). `course.torch_bridge` builds no process group and no model;
# it only translates the `pipeline_order` torch computes into a course `Plan`, which can then be compared op for op and run through the same simulator. The next cell takes torch's order for this schedule and a second interleaved order (breadth-first, see below), both asked for in the earlier cell that has torch order them:

# %%
theirs = torch_orders["plans"]["ScheduleInterleaved1F1B", p, m, v]     # torch_plan(...), asked in section 6's cell
theirs_bfs = torch_orders["plans"]["ScheduleLoopedBFS", p, m, v]

# %% [text] torch-same
# ~~ zh c86ce4b1
# $p={p}, m={m}, v={v}$：torch 的顺序与本库的 `interleaved` 逐个算子完全相同；模拟的 makespan 分别是 {theirs:g} 和 {ours:g}。
# ~~ en d4d31a75
# $p={p}, m={m}, v={v}$: torch's order and the library's `interleaved` are identical op for op; their simulated makespans are {theirs:g} and {ours:g}.

# %%
same_order = theirs.format() == plan.format() and theirs.placement == plan.placement
md(claim(same_order, text("torch-same", p=p, m=m, v=v, theirs=simulate(theirs, costs).makespan, ours=inter.makespan),
         theirs=theirs.format(), ours=plan.format()))

# %% [markdown] depth-breadth
# ~~ zh cd35ac60
# 交错调度还有一个选择：几个 micro-batch 同时能进入不同的 chunk 时先做哪个。Megatron 和 torch 的 `ScheduleInterleaved1F1B`
# 都是**深度优先**（depth-first）：先把早的 micro-batch 推到更深的 chunk，所以按 $p$（或 torch 的组大小）个一组轮转。
# 另一种是**广度优先**（breadth-first，Lamy-Poirier 2022，*Breadth-First Pipeline Parallelism*）：一个 rank 先让全部 $m$ 个 micro-batch 过完自己的第一个 chunk，再过第二个；
# 反向倒过来，一个 chunk 的反向全部做完再做前一个 chunk。下面的 `breadth_first` 写出这个顺序，和深度优先比一比：
# ~~ en ab73407b
# Interleaving leaves one more choice: when several micro-batches could enter different chunks, which goes first. Megatron and torch's `ScheduleInterleaved1F1B`
# are **depth-first**: the earlier micro-batches are pushed to deeper chunks first, hence the rotation in groups of $p$ (or of torch's group size).
# The other choice is **breadth-first** (Lamy-Poirier 2022, *Breadth-First Pipeline Parallelism*): a rank runs all $m$ micro-batches through its first chunk, then through its second;
# going backward it is the other way round, every backward of one chunk before any of the chunk in front of it. `breadth_first` below writes this order down; compare it with depth-first:

# %% [text] breadth
# ~~ zh 74ff0598
# $p={p}, m={m}, v={v}$：torch 的 `ScheduleLoopedBFS` 排出的正是 `breadth_first` 的顺序（逐个算子相同）。不计延迟时两者的 makespan 都是 {df0:g}；`comm` = {c:g} 时深度优先 {df_c:g}、广度优先 {bf_c:g}。显存正相反：广度优先每个 rank 存 {bf_peak:g} 份激活（$m$ 份，和 GPipe 一样），深度优先的 rank 0 只存 {df_peak:g} 份。原因：广度优先时 rank 0 要先做完一个 chunk 上的全部 $m$ 个前向才轮到下一个 chunk，这时第一个 micro-batch 早就绕回来了，绕圈的那次传输被盖住，只有第一圈的灌满和最后一圈的排空付延迟，共 $2(p-1)c$，而深度优先付 $2(vp-1)c$。在 {checked} 个随机点上（$p$ 取 2..8，$m=kp$、$k$ 取 2..4，$v$ 取 2..6，$F$ 取 0.5..2，$B$ 取 0.5..4，$c$ 取 0..$\min(F,B)/v$），广度优先的 makespan 都正好是 $m(F+B)+(p-1)(F+B)/v+2(p-1)c$，每个 rank 的峰值都是 $m$。两者是拿显存换延迟；Lamy-Poirier 还指出，广度优先把一个 chunk 的反向连在一起做完，它的梯度同步（数据并行）可以早些开始、和计算重叠。第 6 节的组大小就是两者之间的旋钮：组等于 $p$ 是深度优先；组等于 $m$ 时（$m < 2p$，只有一轮）前向的顺序就是广度优先的顺序（$m={m_one}$ 时逐个算子核对过）。Llama 3（Dubey 等人 2024）让组大小可调，为的就是在通信和显存之间找平衡。
# ~~ en 88057e3b
# $p={p}, m={m}, v={v}$: torch's `ScheduleLoopedBFS` produces exactly the order of `breadth_first` (op for op). Without latency both take {df0:g}; at `comm` = {c:g} depth-first takes {df_c:g} and breadth-first {bf_c:g}. Memory goes the other way: breadth-first stores {bf_peak:g} units on every rank ($m$, as GPipe does), depth-first only {df_peak:g} on rank 0. The reason: in breadth-first order rank 0 runs all $m$ forwards of one chunk before the next chunk, by which time the first micro-batch has long come round again, so the transfer that closes each loop is hidden; only the fill of the first loop and the drain of the last pay latency, $2(p-1)c$ in all, against depth-first's $2(vp-1)c$. At all {checked} random points checked ($p$ = 2..8, $m=kp$ with $k$ = 2..4, $v$ = 2..6, $F$ in [0.5, 2], $B$ in [0.5, 4], $c$ from 0 to $\min(F,B)/v$) breadth-first's makespan is exactly $m(F+B)+(p-1)(F+B)/v+2(p-1)c$, and every rank peaks at $m$. The two trade memory for latency; Lamy-Poirier also points out that breadth-first finishes one chunk's backwards together, so its data-parallel gradient synchronisation can start earlier and overlap with computation. Section 6's group size is the knob between the two: a group of $p$ is depth-first, and a group of $m$ (one round, $m < 2p$) runs the forwards in breadth-first order (checked op for op at $m={m_one}$). Llama 3 (Dubey et al. 2024) made the group size tunable to find that balance between communication and memory.

# %%
def breadth_first(p, m, v):
    """Every micro-batch through a rank's first chunk, then its second, ...; the backwards chunk by chunk in reverse,
    the latest micro-batch first (the order of torch's ScheduleLoopedBFS)."""
    ranks = []
    for r in range(p):
        forwards = [Op("F", i, c * p + r) for c in range(v) for i in range(m)]
        backwards = [Op("B", i, c * p + r) for c in reversed(range(v)) for i in reversed(range(m))]
        ranks.append(forwards + backwards)
    return Plan(ranks, m, placement=[[c * p + r for c in range(v)] for r in range(p)], name="breadth-first")


def breadth_rule(p, k, v, f, backward, share):
    """Breadth-first with m >= 2p and c <= min(F, B)/v: makespan m(F+B) + (p-1)(F+B)/v + 2(p-1)c, peak m."""
    m, c = k * p, share * min(f, backward) / v
    tl = CompiledPlan(breadth_first(p, m, v)).simulate(Costs(f=f, b=backward, w=0.0, comm=c))
    return (close(tl.makespan, (m + (p - 1) / v) * (f + backward) + 2 * (p - 1) * c)
            and all(close(x, m) for x in tl.peak_activations))


breadth_sw = sweep(breadth_rule, {"p": (2, 8), "k": (2, 4), "v": (2, 6), "f": (0.5, 2.0), "backward": (0.5, 4.0),
                                  "share": (0.0, 1.0)}, n=80, seed=9)
bfs = breadth_first(p, m, v)
lat = Costs(comm=TASK_COMM)
df_c, bf_c = simulate(plan, lat).makespan, simulate(bfs, lat).makespan
bf = simulate(bfs, costs)


def forwards(plan):
    return [[op for step in steps for op in ops_of(step) if op.kind == "F"] for steps in plan.ranks]


one_round = forwards(build("interleaved-flex", p, m_odd, v=v)) == forwards(breadth_first(p, m_odd, v))
md(claim(breadth_sw.holds and theirs_bfs.format() == bfs.format() and close(bf.makespan, inter.makespan)
         and bf_c < df_c and bf.peak_activations[0] > inter.peak_activations[0] and one_round,
         text("breadth", p=p, m=m, v=v, df0=inter.makespan, c=TASK_COMM, df_c=df_c, bf_c=bf_c,
              bf_peak=bf.peak_activations[0], df_peak=inter.peak_activations[0], checked=breadth_sw.checked,
              m_one=m_odd),
         df_c=df_c, bf_c=bf_c, **breadth_sw.figures()))

# %% [markdown] live-intro
# ~~ zh ae7ea50d
# ## 9. 真跑一遍：多进程上的交错调度
#
# 同一个 `Plan` 交给 `course.live`：每个 rank 一个 gloo 进程，每个进程持有 $v$ 个不相邻的 chunk（一叠 Linear+Tanh），
# 激活和梯度用带标签的异步消息传递。运行结束后，每个参数的梯度都和单进程在整个 batch 上算出的梯度比较。
# `emulate=True` 把每个算子补齐到模型里的时长，所以测得的时间线应当和模拟的形状一致。下一格启动进程（有 torch 时实时运行，没有 torch 时显示录制的结果），再下一格看结果：
# ~~ en 7700a785
# ## 9. A real run: the interleaved schedule on several processes
#
# The same `Plan` goes to `course.live`: one gloo process per rank, each holding $v$ chunks that are not neighbours (a stack of Linear+Tanh),
# with activations and gradients passed as tagged asynchronous messages. After the run every parameter gradient is compared with the one a single process computes on the whole batch.
# `emulate=True` pads every operation to its modelled duration, so the measured timeline should have the simulated one's shape. The next cell starts the processes (live where torch is installed, the recorded run without it); the one after shows the result:

# %%
live_plan = build("interleaved", 2, 4, v=2)
# recordings.run("interleaved-emulated") is course.live.run_plan(live_plan, Costs(), emulate=True): live where torch
# is installed, the recorded run without torch (the browser edition).
live = recordings.run("interleaved-emulated")
assert live.plan == live_plan

# %% [text] live-grad
# ~~ zh 5aae095b
# $p={p}$、$v={v}$、$m={m}$：每个参数的梯度与单进程参照一致（最大绝对误差 {err:.1e}）。
# ~~ en c6008ba2
# $p={p}$, $v={v}$, $m={m}$: every parameter gradient matches the single-process reference (largest absolute difference {err:.1e}).

# %% [text] live-timing
# ~~ zh f776320f
# 一个代价单位模拟 {unit:g} ms 的设备时间：测得的 makespan {measured:.3g} s，模拟预测 {simulated:.3g} s，比值 {ratio:.2f}，时间线的形状和模拟一致。
# ~~ en 6b486695
# One cost unit stands for {unit:g} ms of device time: the measured makespan is {measured:.3g} s against a simulated {simulated:.3g} s, a ratio of {ratio:.2f}; the timeline has the simulated shape.

# %% [text] live-timing-noisy
# ~~ zh 88005fcc
# 一个代价单位模拟 {unit:g} ms 的设备时间：测得的 makespan {measured:.3g} s，模拟预测 {simulated:.3g} s，比值 {ratio:.2f}，差得较多：这台机器上进程在抢 CPU，算子本身就超过了模拟的设备时间（补时只能补齐，不能压缩）。
# ~~ en ac3a2bf2
# One cost unit stands for {unit:g} ms of device time: the measured makespan is {measured:.3g} s against a simulated {simulated:.3g} s, a ratio of {ratio:.2f}. That is far off: the processes compete for this machine's CPUs, and the operations themselves take longer than their modelled device time (emulation can only pad, not compress).

# %%
timing = dict(unit=live.unit_ms, measured=live.measured_makespan, simulated=live.simulated_makespan, ratio=live.ratio)
md(claim(live.grad_ok, text("live-grad", p=live_plan.p, v=len(live_plan.placement[0]), m=live_plan.m,
                            err=live.max_abs_err), max_abs_err=live.max_abs_err)
   + " " + claim(0.8 <= live.ratio <= 1.3, text("live-timing", **timing), otherwise=text("live-timing-noisy", **timing)))
fig, (top, bottom) = figure.subplots(2, 1, figsize=(10, 3.6))
plots.gantt(live.timeline, ax=top, title=f"measured: {live.measured_makespan:.3g} s (emulated device time)")
plots.gantt(live.simulated, ax=bottom, title=f"simulated: {live.simulated.makespan:g} cost units")
fig.tight_layout()
figure.show()

# %% [markdown] summary
# ~~ zh 5b5c5c23
# ## 怎么讲清楚
#
# - 交错调度把模型切成 $vp$ 个 chunk，rank $r$ 持有第 $r, r+p, \dots$ 个；micro-batch 在 rank 之间绕 $v$ 圈。
# - 灌满和排空由"一个 chunk 的时间"决定，缩短为 $1/v$；每个 rank 的工作量 $m(F+B)$ 不变，所以 bubble 占比是 $(p-1)/(vm+p-1)$
#   （Megatron 的口径：$\frac{1}{v}\cdot\frac{p-1}{m}$），效果相当于把 micro-batch 数乘以 $v$ 而不缩小 micro-batch。
# - 代价一：点对点消息从 $2m(p-1)$ 变成 $2m(vp-1)$（约 $\times v$）。延迟 $c \le \min(F,B)/v$ 时只有灌满和排空付它，makespan 多 $2(vp-1)c$；
#   从 $v$ 加到 $v+1$ 只在 $v(v+1) < (p-1)(F+B)/(2pc)$ 时划算，最好的 $v$ 约为 $\sqrt{(p-1)(F+B)/(2pc)}$，延迟越大越小，与 $m$ 无关。层数必须能被 $vp$ 整除。
# - 代价二，激活：rank $r$ 的峰值 $p + (p-1-2r)/v$ 份，rank 0 比 1F1B 多 $(p-1)/v$，$v$ 越大多得越少。
# - 整除：Megatron 的经典顺序要 $m$ 是 $p$ 的倍数；torch 的 `ScheduleInterleaved1F1B`（本库 `interleaved-flex`）只要 $m$ 能被轮数 $\max(1,\lfloor m/p\rfloor)$ 整除，组变大时多存激活。
# - 深度优先（Megatron、torch）与广度优先（`ScheduleLoopedBFS`）：$m \ge 2p$ 时，不计延迟一样快；广度优先只付 $2(p-1)c$ 的延迟，却每个 rank 存 $m$ 份激活。
# - 模拟和真跑用的是同一个 `Plan`：梯度逐个与单进程对齐，测得的时间线可以和模拟对照；torch 排出的顺序也能翻译成同一种 `Plan`，逐个算子比较。
#
# ## 练习
#
# - `interleaved-order`（★★☆）：按 Megatron 的前向顺序，用模拟器找出每个 rank 最少要几个 warm-up 前向；再和 Megatron 的
#   $2(p-r-1)+(v-1)p$ 比一比，想想多出来的前向什么时候有用（加上 `comm` 试试）。
# - `interleaved-memory`（★★☆）：推出 torch 放宽版（`interleaved-flex`）在它接受的每一个 $m$ 上每个 rank 的激活峰值，包括 $m$ 不是 $p$ 的倍数、$m < p$ 的情形。
#
# ```bash
# python practice/judge.py start interleaved-order
# python practice/judge.py start interleaved-memory
# ```
# ~~ en 32c9ba71
# ## How to explain it
#
# - The interleaved schedule cuts the model into $vp$ chunks and rank $r$ holds chunks $r, r+p, \dots$; a micro-batch goes round the ranks $v$ times.
# - The fill and the drain are set by the time of one chunk and shrink to $1/v$, while each rank's work $m(F+B)$ stays the same, so the bubble fraction is $(p-1)/(vm+p-1)$
#   (Megatron's measure: $\frac{1}{v}\cdot\frac{p-1}{m}$): the effect of multiplying the number of micro-batches by $v$ without making them smaller.
# - Cost one: point-to-point messages go from $2m(p-1)$ to $2m(vp-1)$ (about $\times v$). With a latency $c \le \min(F,B)/v$ only the fill and the drain pay it, $2(vp-1)c$ on top of the makespan;
#   going from $v$ to $v+1$ pays off only while $v(v+1) < (p-1)(F+B)/(2pc)$, so the best $v$ is about $\sqrt{(p-1)(F+B)/(2pc)}$: smaller as latency grows, whatever $m$ is. The number of layers must be a multiple of $vp$.
# - Cost two, activations: rank $r$ peaks at $p + (p-1-2r)/v$ units; rank 0 holds $(p-1)/v$ more than in 1F1B, and less the larger $v$ is.
# - Divisibility: Megatron's classic order needs $m$ to be a multiple of $p$; torch's `ScheduleInterleaved1F1B` (the library's `interleaved-flex`) only needs $m$ to be a multiple of its number of rounds $\max(1,\lfloor m/p\rfloor)$, and larger groups store more activations.
# - Depth-first (Megatron, torch) against breadth-first (`ScheduleLoopedBFS`): for $m \ge 2p$ equally fast without latency; breadth-first pays only $2(p-1)c$ of latency but stores $m$ units on every rank.
# - The simulation and the real run use the same `Plan`: every gradient matches a single process, and the measured timeline can be set against the simulated one; torch's orders translate into the same kind of `Plan` and compare op for op.
#
# ## Exercises
#
# - `interleaved-order` (★★☆): with Megatron's order of forwards, use the simulator to find the fewest warm-up forwards each rank needs; then compare with Megatron's
#   $2(p-r-1)+(v-1)p$ and think about when the extra forwards help (try adding `comm`).
# - `interleaved-memory` (★★☆): derive every rank's activation peak under torch's relaxed order (`interleaved-flex`) for every $m$ it accepts, including $m$ not a multiple of $p$ and $m < p$.
#
# ```bash
# python practice/judge.py start interleaved-order
# python practice/judge.py start interleaved-memory
# ```
