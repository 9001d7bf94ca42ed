# %% [markdown] intro
# ~~ zh 93fb6fde
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
# 3. 各 stage 一样快时 bubble 一样，都是 $\frac{p-1}{m+p-1}$。激活不一样：GPipe 每个 stage 存 $m$ 份；1F1B 的 stage $s$ 最多存 $\min(m, p-s)$ 份，$m \ge p$ 之后与 $m$ 无关。
# 4. 可能。rank 0 等 rank 1 的梯度，rank 1 却在等 rank 0 一个排在后面的前向，两边互相等，这就是死锁。只看一个 rank 发现不了，要看跨 rank 的依赖有没有环。
# 5. 操作耗时是任意实数（实测的毫秒数、不均匀的 stage），没有公共的"时间单位"；按事件推进时，每个操作只产生一次"完成"事件，模拟的代价只和操作数有关，和时间长短无关。
# 6. 不一样。GPipe 只在灌满和排空时付延迟；1F1B 的稳定阶段里，rank 0 做完一个前向就要等一个更早的 micro-batch 的梯度回来（$p=4$ 时做完 $F_4$ 等的是 $B_1$），往返路上的延迟直接变成空闲，所以 $m \ge 3$ 时 1F1B 对延迟更敏感（第 7 节）。
#
# </details>
# ~~ en a3ffb362
# # Chapter 2. The schedule simulator: plans, dependencies and events
#
# Chapter 1's bubble formula holds only when every stage is equally fast and communication is free. Real pipelines have fast and slow stages and transfer latency, and GPipe is far from the only schedule. This chapter writes a schedule down as a small intermediate representation, the *plan*, and turns any plan into a timeline with an event-driven simulator. The later chapters' schedules, live runs and JCT analysis all rest on these two pieces. The [glossary](../glossary.md) pairs every term with its Chinese counterpart.
#
# ## Self-test
#
# 1. Which two kinds of information must a plan spell out?
# 2. Which operations must finish before the backward B of micro-batch $i$ on stage $s$ may start? And on the last stage?
# 3. Do GPipe and 1F1B have the same bubble? Do their stages store the same number of micro-batches' activations?
# 4. If every rank's own order runs each F before its B, can the plan as a whole still deadlock?
# 5. Why does the simulator jump from event to event instead of stepping one time unit at a time?
# 6. Does point-to-point latency hurt GPipe and 1F1B alike?
#
# <details>
# <summary>Answers</summary>
#
# 1. Which operations each rank runs and in what order (F/B/W, which micro-batch, which stage), and which stage sits on which rank (the placement).
# 2. Its own forward $F_i$ on the same stage, and $B_i$ of the next stage $s+1$ (gradients travel from the back to the front). The last stage waits only for its own $F_i$: that is where the loss is computed.
# 3. With equally fast stages the bubble is the same, $\frac{p-1}{m+p-1}$. The activations differ: GPipe stores $m$ micro-batches on every stage, while stage $s$ of 1F1B stores at most $\min(m, p-s)$, which stops depending on $m$ once $m \ge p$.
# 4. Yes. Rank 0 may wait for a gradient from rank 1 while rank 1 waits for a forward that rank 0 runs only later: each waits for the other, and that is a deadlock. Looking at one rank at a time cannot find it; one has to look for a cycle in the dependencies across ranks.
# 5. Durations are arbitrary real numbers (measured milliseconds, uneven stages), so there is no common time unit. Advancing by events, every operation produces one completion event, so the cost of a simulation depends on the number of operations, not on how long they take.
# 6. No. GPipe pays latency only while the pipeline fills and drains. In 1F1B's steady state rank 0, after each forward, waits for the gradient of an earlier micro-batch (at $p=4$, after $F_4$ it waits for $B_1$), so every latency on that round trip turns into idle time: from $m \ge 3$ on, 1F1B is the more sensitive to latency (section 7).
#
# </details>

# %%
import math

from course import figure, plots
from course.chapter import md, open_chapter
from course.claims import claim, reveal, sweep
from course.costs import Costs
from course.plan import Op, Plan, PlanError
from course.schedules import REGISTRY, build
from course.sim import DeadlockError, simulate
from course.sim_compiled import CompiledPlan
from course.widgets import explore

text = open_chapter("02_simulator")


def ranges(space):
    """A sweep's range in notation both editions read: p = 1..8, f in [0.5, 2], schedule in {gpipe, 1f1b}."""
    def one(name, spec):
        if isinstance(spec, list):
            return f"{name} ∈ {{{', '.join(map(str, spec))}}}"
        lo, hi = spec
        if isinstance(lo, int) and isinstance(hi, int):
            return f"{name} = {lo}..{hi}"
        return f"{name} ∈ [{lo:g}, {hi:g}]"
    return ", ".join(one(name, spec) for name, spec in space.items())


def numbers(xs):
    """[4, 3, 2, 1] for a list of whole or fractional numbers."""
    return "[" + ", ".join(f"{x:g}" for x in xs) + "]"

# %% [markdown] plan-ir
# ~~ zh 6e6358fa
# ## 1. plan：每个 rank 的操作清单
#
# 一个 *plan* 就是流水线论文里那种表格：每个 rank 一行，按执行顺序列出操作。`F3` 是 micro-batch 3 的前向，`B0` 是 micro-batch 0 的反向。
# ~~ en 79cb00ac
# ## 1. The plan: each rank's list of operations
#
# A *plan* is the table found in pipeline papers: one row per rank, listing its operations in the order it runs them. `F3` is the forward of micro-batch 3, `B0` the backward of micro-batch 0.

# %% [text] plan-1f1b
# ~~ zh a7b19a5a
# $p={p}$、$m={m}$ 的 1F1B（这个调度也叫 PipeDream-Flush，是 Megatron-LM 不交错时的调度）：
# ~~ en 674c758d
# 1F1B with $p={p}$ and $m={m}$ (the schedule is also called PipeDream-Flush; Megatron-LM runs it when it does not interleave):

# %%
P, M = 4, 8
plan = build("1f1b", P, M)
md(text("plan-1f1b", p=P, m=M))
print(plan.format())

# %% [markdown] plan-read
# ~~ zh d150f3bd
# 每一行读起来就是第 1 章里的调度：rank 0 先做几个前向"预热"（warm-up），然后一个前向一个反向交替（稳定阶段），最后把剩下的反向做完（收尾，cool-down）。
#
# plan 也可以手写，再用 `Plan.parse` 读回来：每行是一个 rank 的操作，用空格隔开。`validate()` 在模拟之前检查它是不是一个完整的流水线：每个需要的操作恰好出现一次、放在持有该 stage 的 rank 上、同一 rank 上不会先做反向再做前向。下面三个 plan（两个 rank，$m=2$）各错一处：第一个 rank 0 少了 B1，第二个 rank 1 先做 B1 再做它的 F1，第三个多了一个不存在的 F3。报错信息指出第一处问题：
# ~~ en d14c989c
# Each row reads like a schedule of chapter 1: rank 0 first runs a few forwards (the warm-up), then alternates one forward and one backward (the steady state), and finally runs the backwards that are left (the cool-down).
#
# A plan can also be written by hand and read back with `Plan.parse`: one line per rank, its operations separated by spaces. Before any simulation, `validate()` checks that it is a complete pipeline: every operation needed appears exactly once, on the rank that holds its stage, and no rank runs a backward before its forward. Each of the three plans below (two ranks, $m=2$) has one mistake: in the first, rank 0 lacks B1; in the second, rank 1 runs B1 before its F1; the third has an F3 that does not exist. The error names the first problem:

# %%
broken_plans = ["F0 F1 B0\nF0 F1 B0 B1",
                "F0 B0 F1 B1\nF0 B1 F1 B0",
                "F0 F1 B0 B1 F3\nF0 F1 B0 B1"]
for source in broken_plans:
    try:
        Plan.parse(source, num_microbatches=2).validate()
        print(f"{source!r}: valid")
    except PlanError as err:
        print(f"{source!r}\n    PlanError: {err}")

# %% [markdown] deps
# ~~ zh 2babd777
# ## 2. 依赖：谁等谁
#
# 调度只规定了每个 rank 内部的顺序；跨 rank 的等待来自数据依赖：
#
# - stage $s$ 的 $F_i$ 要等 stage $s-1$ 的 $F_i$（需要它的输出激活）；
# - stage $s$ 的 $B_i$ 要等同一 stage 的 $F_i$（需要保存的激活），以及 stage $s+1$ 的 $B_i$（需要传回来的梯度）；最后一个 stage 的 $B_i$ 只等自己的 $F_i$。
#
# `plan.dependencies(op)` 直接给出这份清单。下面每行 `A <- X, Y` 表示 A 要等 X 和 Y 做完，`.s1` 是 stage 编号：
# ~~ en 4991a881
# ## 2. Dependencies: who waits for whom
#
# A schedule fixes only the order within each rank; every wait across ranks comes from a data dependency:
#
# - $F_i$ on stage $s$ waits for $F_i$ on stage $s-1$ (it needs that stage's output activation);
# - $B_i$ on stage $s$ waits for $F_i$ on the same stage (it needs the stored activations) and for $B_i$ on stage $s+1$ (it needs the gradient sent back); on the last stage $B_i$ waits only for its own $F_i$.
#
# `plan.dependencies(op)` gives this list directly. In each line below, `A <- X, Y` means that A waits for X and Y to finish; `.s1` is the stage number:

# %%
for op in (Op("F", 2, 0), Op("F", 2, 1), Op("B", 2, 1), Op("B", 2, 3)):
    print(f"{op} <- {', '.join(str(d) for d in plan.dependencies(op)) or '-'}")

# %% [markdown] event-sim
# ~~ zh 3ddb2c15
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
# 每一步恰好产生一个完成事件（重叠的 `F&B` 对算一步），所以事件数等于步数，和时间的长短无关；时间从一个事件直接跳到下一个，耗时可以是任意实数。`simulate(..., trace=events)` 会把处理过的事件按顺序记进列表 `events`。下面是 1F1B 的前 8 个完成事件（时刻、rank、这一步），耗时刻意选成非整数：
# ~~ en ccaf1818
# ## 3. Event-driven simulation
#
# The simulator has a single rule: **a rank runs its plan in order, and its next operation starts as soon as the rank is free and every dependency has finished (plus the transfer latency when it comes from another rank).**
#
# `simulate` in `course/sim.py` is that rule written down directly (about a hundred lines, standard library only, worth reading from top to bottom). Instead of stepping one time unit at a time it keeps a queue of **completion events** ordered by time; an event `(t, r)` means "the step rank $r$ is running ends at time $t$":
#
# 1. It first checks the plan itself (`plan.validate()`: every operation exactly once, on the rank that holds its stage, each B after its own F, ...) and gets each step's duration from `Costs.durations`.
# 2. Every rank tries to start its first step. If all its inputs are computed, the start time is max(the moment the rank is free, the finish time of each input, plus `comm` for an input from another rank), and the step's completion event goes into the queue; if an input is not computed yet, the rank parks on that operation.
# 3. It repeatedly takes the earliest completion event, records the finish time of every operation of that step, lets the ranks parked on those operations try again, and lets this rank try its next step.
# 4. When the queue is empty it stops. A rank that has not finished means a deadlock: each stuck rank is parked on an operation that can never be computed, and the report says what it waits for (section 5).
#
# Each step produces exactly one completion event (an overlapped `F&B` pair counts as one step), so the number of events equals the number of steps, whatever the durations; time jumps from one event to the next, and durations can be any real numbers. `simulate(..., trace=events)` records the events it handles, in order, in the list `events`. Here are the first 8 completion events of 1F1B (time, rank, step), with durations chosen to be non-integers on purpose:

# %% [text] events
# ~~ zh 141c4261
# 整个 plan 有 **{steps}** 步，模拟恰好处理了 **{events}** 个完成事件，而且按时刻先后处理；F={f:g}、完整反向 {backward:g} 时 makespan 是 {makespan:.2f}，第 1 章的公式 $(m+p-1)(F+B)$ 给出 {formula:.2f}：各 stage 一样快时，非整数耗时下公式照样成立。"每一步一个完成事件、按时刻先后处理"在 {checked} 个随机点上都成立（{space}）。
# ~~ en e0afce53
# The plan has **{steps}** steps, and the simulation handled exactly **{events}** completion events, in time order. With F = {f:g} and a full backward of {backward:g} the makespan is {makespan:.2f}, and chapter 1's formula $(m+p-1)(F+B)$ gives {formula:.2f}: with equally fast stages the formula holds for non-integer durations too. "One completion event per step, handled in time order" holds at all {checked} random points checked ({space}).

# %%
F, BACKWARD = 0.7, 1.3
trace = []                  # the completion events simulate() handles, in order: (time, rank, step)
tl = simulate(plan, Costs(f=F, b=BACKWARD / 2, w=BACKWARD / 2), trace=trace)
for t, rank, step in trace[:8]:
    print(f"t={t:5.2f}  rank {rank}  {step}")
n_steps = sum(len(steps) for steps in plan.ranks)
formula = (plan.m + plan.p - 1) * (F + BACKWARD)


def one_event_per_step(schedule, p, m, f, backward):
    """The simulator handles one completion event per step of the plan, in time order."""
    events = []
    sched = build(schedule, p, m)
    simulate(sched, Costs(f=f, b=backward / 2, w=backward / 2), trace=events)
    times = [t for t, _, _ in events]
    return len(events) == sum(len(steps) for steps in sched.ranks) and times == sorted(times)


EVENT_SPACE = {"schedule": ["gpipe", "1f1b", "zb-h1", "zb-h2"], "p": (1, 8), "m": (1, 16), "f": (0.5, 2.0),
               "backward": (0.5, 4.0)}
events_sw = sweep(one_event_per_step, EVENT_SPACE, n=150, seed=2)
md(claim(len(trace) == n_steps and [t for t, _, _ in trace] == sorted(t for t, _, _ in trace)
         and abs(tl.makespan - formula) < 1e-9 and events_sw.holds,
         text("events", steps=n_steps, events=len(trace), f=F, backward=BACKWARD, makespan=tl.makespan,
              formula=formula, checked=events_sw.checked, space=ranges(EVENT_SPACE)),
         makespan=tl.makespan, formula=formula, **events_sw.figures()))

# %% [markdown] compiled
# ~~ zh face976c
# 练习 `event-simulator` 会让你自己写出这个模拟器；`course.sim.simulate` 是参考实现，出错时（见第 5 节）它会说明每个卡住的 rank 在等什么。要模拟成千上万次的地方（第 7 章的排序搜索、基准测试）用 `course.sim_compiled.CompiledPlan`：同一条规则，先把 plan 编译成扁平的列表再跑，专为大量模拟而写（`benchmarks/bench_simulator.py` 在同一次运行里测出两者各自相对种子模拟器的速度比）；测试保证两个模拟器在每个调度、随机的代价和乱序的 plan 上给出逐位相同的时间线和同样的死锁报告。
#
# ## 4. GPipe 与 1F1B：同样的 bubble，不同的显存
#
# 把两个调度放在同一条时间轴上，右边是每个 rank 同时保存的激活份数（一份 = 一个 micro-batch 在一个 stage 上的激活）。激活在 F 开始时分配，在这个 micro-batch 的反向做完时释放：
# ~~ en 0159ae1e
# The exercise `event-simulator` has you write this simulator yourself; `course.sim.simulate` is the reference, and when a plan fails (section 5) it says what every stuck rank waits for. Where thousands of simulations run (chapter 7's ordering search, the benchmarks) the course uses `course.sim_compiled.CompiledPlan`: the same rule, with the plan compiled once into flat columns (lists) and then run, written for many simulations (`benchmarks/bench_simulator.py` measures, in one run, how fast each of the two is against the seed's simulator). The tests hold both simulators to identical timelines, bit for bit, and the same deadlock reports on every schedule, random costs and shuffled plans.
#
# ## 4. GPipe and 1F1B: the same bubble, different memory
#
# The two schedules on one time axis; on the right, how many micro-batches' activations each rank holds at once (one unit = one micro-batch's activations on one stage). Activations are allocated when an F starts and released when that micro-batch's backward ends:

# %% [text] same-bubble
# ~~ zh 29045bec
# 两者 makespan 都是 **{makespan:g}**，bubble 都是 **{bubble:.1%}**。峰值激活：GPipe 的各 rank 是 {gpipe_peaks}，1F1B 是 {ofob_peaks}。各 stage 一样快时两者的 makespan 总是相同：在 {checked} 个随机点上核对过（{space}）。
# ~~ en 163479e0
# Both take **{makespan:g}** and both have a bubble of **{bubble:.1%}**. Peak activations: {gpipe_peaks} on GPipe's ranks, {ofob_peaks} on 1F1B's. With equally fast stages the two makespans are always equal: checked at {checked} random points ({space}).

# %%
gpipe_tl = simulate(build("gpipe", P, M), Costs())
ofob_tl = simulate(build("1f1b", P, M), Costs())
plots.compare([gpipe_tl, ofob_tl], memory_too=True)
figure.show()


def same_makespan(p, m, f, backward):
    """GPipe and 1F1B take equally long when every stage costs the same."""
    costs = Costs(f=f, b=backward, w=0.0)    # a plan without W ops runs the full backward b + w
    return math.isclose(simulate(build("gpipe", p, m), costs).makespan,
                        simulate(build("1f1b", p, m), costs).makespan, rel_tol=1e-12)


EVEN_SPACE = {"p": (1, 8), "m": (1, 24), "f": (0.5, 2.0), "backward": (0.5, 4.0)}
even_sw = sweep(same_makespan, EVEN_SPACE, n=200, seed=3)
md(claim(gpipe_tl.makespan == ofob_tl.makespan and gpipe_tl.bubble_ratio == ofob_tl.bubble_ratio and even_sw.holds,
         text("same-bubble", makespan=gpipe_tl.makespan, bubble=gpipe_tl.bubble_ratio,
              gpipe_peaks=numbers(gpipe_tl.peak_activations), ofob_peaks=numbers(ofob_tl.peak_activations),
              checked=even_sw.checked, space=ranges(EVEN_SPACE)),
         gpipe=gpipe_tl.makespan, one_f_one_b=ofob_tl.makespan, **even_sw.figures()))

# %% [markdown] peak-m
# ~~ zh e4cd577b
# 第 1 章说增大 $m$ 能压低 bubble。下表看增大 $m$ 时两种调度的峰值激活：
# ~~ en e88ecbea
# Chapter 1 showed that a larger $m$ lowers the bubble. The table shows what a larger $m$ does to the two schedules' peak activations:

# %% [text] peak-table
# ~~ zh 3f5a763b
# $p={p}$：
#
# | m | bubble（两者相同） | GPipe 的峰值 | 1F1B 的峰值（rank 0） |
# |---|---|---|---|
# ~~ en b179ccc9
# $p={p}$:
#
# | m | bubble (both) | GPipe's peak | 1F1B's peak (rank 0) |
# |---|---|---|---|

# %% [text] peak-grows
# ~~ zh 6d49f07c
# GPipe 的峰值随 $m$ 增长（就是 $m$）；1F1B 的停在 $p$ = {p}。有了 1F1B，增大 $m$ 不再需要更多激活显存。
# ~~ en 92b0c3e5
# GPipe's peak grows with $m$ (it is $m$); 1F1B's stays at $p$ = {p}. With 1F1B, a larger $m$ no longer costs activation memory.

# %%
rows, table_ms = [], (4, 8, 16, 32)
for m in table_ms:
    g, o = simulate(build("gpipe", P, m)), simulate(build("1f1b", P, m))
    assert g.bubble_ratio == o.bubble_ratio
    rows.append(f"| {m} | {g.bubble_ratio:.1%} | {max(g.peak_activations):g} | {max(o.peak_activations):g} |")
md(text("peak-table", p=P) + "\n" + "\n".join(rows))
md(claim(all(max(simulate(build("gpipe", P, m)).peak_activations) == m
             and max(simulate(build("1f1b", P, m)).peak_activations) == P for m in table_ms),
         text("peak-grows", p=P), p=P))

# %% [markdown] warm-up
# ~~ zh 1e7032f0
# 1F1B 里 stage $s$ 先做 $p-s-1$ 个预热前向，再进入"一前一后"：做一个前向，新的激活进来；做一个反向，最老的激活释放。所以 $m$ 够多时它手里最多有 $p-s$ 份。第 1 章自测第 5 题说 GPipe 要存 $m$ 份；1F1B 把它压到了 $p-s$。可是 micro-batch 不够多时呢？
# ~~ en b603cb07
# In 1F1B, stage $s$ first runs $p-s-1$ warm-up forwards and then goes "one forward, one backward": each forward brings in new activations, each backward releases the oldest. So with enough micro-batches it holds at most $p-s$ of them. Chapter 1's self-test question 5 said GPipe stores $m$; 1F1B cuts that to $p-s$. But what if there are few micro-batches?

# %% [markdown] predict-few
# ~~ zh d755a50b
# **预测：** $p=4$、只有 2 个 micro-batch 的 1F1B，四个 rank 的峰值激活各是多少？写成一个列表。
# ~~ en 7a304b8c
# **Predict:** in 1F1B with $p=4$ and only 2 micro-batches, what is each of the four ranks' peak activation count? Write a list.

# %%
guess_peaks = None   # e.g. [4, 3, 2, 1]

# %% [text] few
# ~~ zh c5a55ac9
# 只有 {few} 个 micro-batch 时，前面的 stage 存不到 $p-s$ 份：预热还没做满，micro-batch 就用完了，手里最多是全部的 {few} 份。
# ~~ en c66d87c1
# With only {few} micro-batches the front stages never reach $p-s$: the micro-batches run out before the warm-up is complete, so a stage holds at most all {few} of them.

# %% [text] peak-law
# ~~ zh 8c9c6544
# 在 {checked} 个随机点上（{space}），1F1B 的 stage $s$ 的峰值都是 $\min(m, p-s)$，GPipe 的每个 stage 都是 $m$：$m \ge p$ 之后 1F1B 的峰值才与 $m$ 无关。峰值只由每个 rank 的操作顺序决定，和耗时无关，所以不同的 F、完整反向和延迟都给出同样的峰值。
# ~~ en 7fc17d52
# At all {checked} random points ({space}) stage $s$ of 1F1B peaks at $\min(m, p-s)$ and every stage of GPipe at $m$: only from $m \ge p$ on does 1F1B's peak stop depending on $m$. The peak is set by each rank's order of operations alone, not by durations, so every F, full backward and latency gives the same peaks.

# %%
FEW = 2
few = simulate(build("1f1b", P, FEW))
md(reveal(guess_peaks, few.peak_activations, text("few", few=FEW)))


def peak_law(p, m, f, backward, comm):
    """1F1B's stage s holds at most min(m, p - s) micro-batches, each of GPipe's stages m, whatever the costs."""
    costs = Costs(f=f, b=backward, w=0.0, comm=comm)
    return (simulate(build("1f1b", p, m), costs).peak_activations == [min(m, p - s) for s in range(p)]
            and simulate(build("gpipe", p, m), costs).peak_activations == [m] * p)


PEAK_SPACE = {"p": (1, 8), "m": (1, 24), "f": (0.5, 2.0), "backward": (0.5, 4.0), "comm": (0.0, 1.0)}
peak_sw = sweep(peak_law, PEAK_SPACE, n=200, seed=4)
md(claim(peak_sw.holds, text("peak-law", checked=peak_sw.checked, space=ranges(PEAK_SPACE)), **peak_sw.figures()))

# %% [markdown] bytes
# ~~ zh 7698614d
# ### 4.1 换成字节：一层激活有多大，rank 0 为什么存下一整个模型
#
# 上面的"一份"是一个 micro-batch 在一个 stage 上的激活。到了 GPU 上要问的是字节。Korthikanti 等人（2022，*Reducing Activation Recomputation in Large Transformer Models*）逐个张量数过一层 transformer 为反向保存的激活：激活用 16 位、dropout mask 每个元素 1 字节、FFN 宽 $4h$、注意力分数矩阵要存下来（eager attention，不用 FlashAttention）时，一层对一个 micro-batch 保存 $sbh(34 + 5as/h)$ 字节，$s$ 是序列长度，$b$ 是 micro-batch 大小，$h$ 是 hidden，$a$ 是注意力头数。tensor parallel（TP，大小 $t$）、sequence parallel（SP）和激活重计算（recompute）各自去掉或切分其中一部分。`course.memory` 把每个张量列成一项，下面用 GPT-3 175B（$s=2048$、$b=1$、$t=8$）把论文的六种设置算一遍，再和论文的闭式公式对一下：
# ~~ en 4a66bffc
# ### 4.1 In bytes: how large one layer's activations are, and why rank 0 holds a whole model's
#
# The "unit" above is one micro-batch's activations on one stage. On a GPU the question is bytes. Korthikanti et al. (2022, *Reducing Activation Recomputation in Large Transformer Models*) counted, tensor by tensor, what one transformer layer keeps for the backward: with 16-bit activations, 1-byte dropout masks, an FFN of width $4h$ and materialised attention scores (eager attention, no FlashAttention), one layer keeps $sbh(34 + 5as/h)$ bytes per micro-batch, where $s$ is the sequence length, $b$ the micro-batch size, $h$ the hidden size and $a$ the number of attention heads. Tensor parallelism (TP, of size $t$), sequence parallelism (SP) and activation recomputation each remove or split part of it. `course.memory` lists every tensor as a term; the next cell computes the paper's six settings for GPT-3 175B ($s=2048$, $b=1$, $t=8$) and checks them against the paper's closed forms:

# %% [text] korthikanti-table
# ~~ zh 3565a26a
# | 设置 | 公式 | 每层、每个 micro-batch |
# |---|---|---|
# | 不并行 | $sbh(34 + 5as/h)$ | {none:,} 字节（{none_mb:,.1f} MB） |
# | TP | $sbh(10 + 24/t + 5as/(ht))$ | {tp:,} 字节（{tp_mb:,.1f} MB） |
# | TP + SP | $\frac{{sbh}}{{t}}(34 + 5as/h)$ | {tp_sp:,} 字节（{tp_sp_mb:,.1f} MB） |
# | TP + 选择性激活重计算 | $sbh(10 + 24/t)$ | {tp_sel:,} 字节（{tp_sel_mb:,.1f} MB） |
# | TP + SP + 选择性激活重计算 | $34sbh/t$ | {tp_sp_sel:,} 字节（{tp_sp_sel_mb:,.1f} MB） |
# | 完全激活重计算 | $2sbh$ | {full:,} 字节（{full_mb:,.1f} MB） |
# ~~ en 95d84247
# | setting | formula | per layer and micro-batch |
# |---|---|---|
# | no parallelism | $sbh(34 + 5as/h)$ | {none:,} bytes ({none_mb:,.1f} MB) |
# | TP | $sbh(10 + 24/t + 5as/(ht))$ | {tp:,} bytes ({tp_mb:,.1f} MB) |
# | TP + SP | $\frac{{sbh}}{{t}}(34 + 5as/h)$ | {tp_sp:,} bytes ({tp_sp_mb:,.1f} MB) |
# | TP + selective recomputation | $sbh(10 + 24/t)$ | {tp_sel:,} bytes ({tp_sel_mb:,.1f} MB) |
# | TP + SP + selective recomputation | $34sbh/t$ | {tp_sp_sel:,} bytes ({tp_sp_sel_mb:,.1f} MB) |
# | full recomputation | $2sbh$ | {full:,} bytes ({full_mb:,.1f} MB) |

# %% [text] score-share
# ~~ zh c5bdbac8
# 不并行时，注意力分数那一项 $5as/h$ 占了一层激活的 **{share:.0%}**：它随 $s^2$ 增长。选择性激活重计算只在反向时重新计算注意力核心（$QK^T$、softmax、dropout、乘 $V$），正好去掉这一项：TP + SP 下从 {tp_sp:.0f} MB 降到 {tp_sp_sel:.0f} MB，只用 TP 时从 {tp:.0f} MB 降到 {tp_sel:.0f} MB。多花的计算很少：注意力核心的两次矩阵乘（$4bs^2h$ FLOPs）只占一层前向（$24bsh^2 + 4bs^2h$）的 $s/(6h+s)$ = {core_flops:.1%}。
# ~~ en 8431480a
# Without parallelism the attention-score term $5as/h$ makes up **{share:.0%}** of a layer's activations, and it grows with $s^2$. Selective recomputation recomputes only the attention core ($QK^T$, softmax, dropout, the product with $V$) in the backward, which removes exactly this term: from {tp_sp:.0f} MB to {tp_sp_sel:.0f} MB under TP + SP, from {tp:.0f} MB to {tp_sel:.0f} MB under TP alone. The extra compute is small: the core's two matrix products ($4bs^2h$ FLOPs) are $s/(6h+s)$ = {core_flops:.1%} of a layer's forward ($24bsh^2 + 4bs^2h$).

# %%
from course.memory import (
    PRESETS,
    RECOMPUTE,
    ActivationConfig,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    layer_terms,
    pipeline_memory,
)
from course.widgets import memory_explorer

GPT3 = PRESETS["gpt3-175b"]
SEQ, TP = 2048, 8
SETTINGS = {"none": (1, False, "none"), "tp": (TP, False, "none"), "tp_sp": (TP, True, "none"),
            "tp_sel": (TP, False, "selective"), "tp_sp_sel": (TP, True, "selective"), "full": (TP, False, "full")}
per_layer = {}
for key, (t, sp, rc) in SETTINGS.items():
    per_layer[key] = layer_activation_bytes(GPT3, ActivationConfig(SEQ, 1, t, sp, rc))
    assert per_layer[key] == korthikanti_layer_bytes(SEQ, 1, GPT3.hidden, GPT3.heads, t, sp, rc)
md(text("korthikanti-table", **per_layer, **{f"{key}_mb": v / 1e6 for key, v in per_layer.items()}))
score_share = 5 * GPT3.heads * SEQ / GPT3.hidden / (34 + 5 * GPT3.heads * SEQ / GPT3.hidden)
core_flops = SEQ / (6 * GPT3.hidden + SEQ)
md(claim(score_share > 0.5 and core_flops < 0.05 and per_layer["tp_sel"] < per_layer["tp"]
         and per_layer["tp_sp_sel"] < per_layer["tp_sp"],
         text("score-share", share=score_share, core_flops=core_flops,
              **{key: per_layer[key] / 1e6 for key in ("tp", "tp_sel", "tp_sp", "tp_sp_sel")}),
         score_share=score_share, core_flops=core_flops))

# %% [markdown] rank0-bytes
# ~~ zh df8dd851
# 再把每层的字节放回 1F1B。rank 0 最多同时存 $p$ 个 micro-batch，每个 micro-batch 在它那里有 $L/p$ 层（下表取 $m = 2p$、TP + SP + 选择性激活重计算，只算各层的激活）：
# ~~ en 438c20f3
# Now put the bytes per layer back into 1F1B. Rank 0 holds up to $p$ micro-batches at once, each with $L/p$ layers on it (the table takes $m = 2p$ and TP + SP + selective recomputation, and counts the layers' activations only):

# %% [text] rank0-table
# ~~ zh 28df1e0c
# | p | 每个 stage 的层数 | rank 0 的激活峰值 |
# |---|---|---|
# ~~ en d3839dd7
# | p | layers per stage | rank 0's activation peak |
# |---|---|---|

# %% [text] rank0-whole
# ~~ zh 9122bfed
# 对每一个整除 {layers} 的 $p$，rank 0 的激活峰值都是 **{whole:.2f} GB** = {layers} 层 × {per_layer:.1f} MB：$p$ 个 micro-batch × $L/p$ 层，正好是**整个模型对一个 micro-batch 的激活**。加深流水线能把权重、梯度和优化器状态分到更多 GPU 上，却分不掉 1F1B 下 rank 0 的激活。
#
# 要省它，除了激活重计算、TP/SP 和更小的 micro-batch，还有几条路：
#
# - **换一个让 rank 0 少存几份的调度。** V-Min 和 V-Half（Qi 等人 2024，*Pipeline Parallelism with Controllable Memory*）让每个 rank 持有两个 chunk、按 V 形放置，并把反向拆成两步，排出的顺序让激活峰值约为 1F1B 的 1/3 和 1/2（同一篇论文的 V-ZB 用 1F1B 的显存换零 bubble）。$p={vp}$、$m={vm}$ 时 rank 0 的峰值是 {vmin:g} 和 {vhalf:g} 份 stage 激活，1F1B 是 {ofob:g} 份；$p={bigp}$ 时是 {bigmin:g} 和 {bighalf:g}，1F1B 是 {bigofob:g}。第 5 章讲它们怎样做到。
# - **激活 offload**：把激活暂存到 CPU 内存，反向之前再取回来，用 PCIe 带宽换显存。
# - **让第一个 stage 少分几层。** Llama 3 的训练就让第一个和最后一个 stage 各少一层 transformer，来平衡 embedding 和输出层的负担（Dubey 等人 2024，§3.3.2）。
# ~~ en 1e56ac3e
# For every $p$ that divides {layers}, rank 0's activation peak is **{whole:.2f} GB** = {layers} layers × {per_layer:.1f} MB: $p$ micro-batches × $L/p$ layers, exactly **the whole model's activations for one micro-batch**. A deeper pipeline spreads the weights, gradients and optimizer states over more GPUs, but not rank 0's activations under 1F1B.
#
# To save them there are, besides activation recomputation, TP/SP and a smaller micro-batch, a few more ways:
#
# - **A schedule that keeps fewer micro-batches on rank 0.** V-Min and V-Half (Qi et al. 2024, *Pipeline Parallelism with Controllable Memory*) give every rank two chunks placed in a V, split the backward in two, and order the work so that the activation peak is about 1/3 and 1/2 of 1F1B's (the same paper's V-ZB trades 1F1B's memory for a zero bubble). At $p={vp}$, $m={vm}$ rank 0 peaks at {vmin:g} and {vhalf:g} stages' worth of activations, against 1F1B's {ofob:g}; at $p={bigp}$ at {bigmin:g} and {bighalf:g}, against {bigofob:g}. Chapter 5 shows how they get there.
# - **Offload activations to host memory** and fetch them back before the backward, trading PCIe bandwidth for GPU memory.
# - **Give the first stage fewer layers.** Llama 3's training took one transformer layer each off the first and the last stage to balance the embedding and the output layer (Dubey et al. 2024, §3.3.2).

# %%
cfg_sel = ActivationConfig(SEQ, 1, TP, True, "selective")
bytes_per_layer = layer_activation_bytes(GPT3, cfg_sel)
DEPTHS = [p for p in range(2, 33) if GPT3.layers % p == 0]
rank0 = {p: pipeline_memory(build("1f1b", p, 2 * p), GPT3, cfg_sel, extras=False).ranks[0].activations for p in DEPTHS}
md(text("rank0-table") + "\n"
   + "\n".join(f"| {p} | {GPT3.layers // p} | {v / 1e9:.2f} GB |" for p, v in rank0.items()))
V_P, BIG_P = 4, 16                      # two depths, each with m = 2p
v_peaks = {(p, s): simulate(build(s, p, 2 * p)).peak_activations[0]
           for p in (V_P, BIG_P) for s in ("1f1b", "v-min", "v-half")}
md(claim(all(v == GPT3.layers * bytes_per_layer for v in rank0.values())
         and all(v_peaks[p, "v-min"] < v_peaks[p, "v-half"] < v_peaks[p, "1f1b"] for p in (V_P, BIG_P)),
         text("rank0-whole", layers=GPT3.layers, whole=GPT3.layers * bytes_per_layer / 1e9,
              per_layer=bytes_per_layer / 1e6, vp=V_P, vm=2 * V_P,
              vmin=v_peaks[V_P, "v-min"], vhalf=v_peaks[V_P, "v-half"], ofob=v_peaks[V_P, "1f1b"],
              bigp=BIG_P, bigmin=v_peaks[BIG_P, "v-min"], bighalf=v_peaks[BIG_P, "v-half"],
              bigofob=v_peaks[BIG_P, "1f1b"]),
         rank0=rank0, v_peaks=v_peaks))

# %% [text] static-intro
# ~~ zh cdaa252d
# 最后把权重、梯度和 Adam 状态（混合精度下每个参数 16 字节）也加进来，画出 $p={p}$、$m={m}$ 时每个 rank 一次迭代里持有的 GB（embedding 在第一个 stage，lm_head 和 loss 的 logits 在最后一个 stage）。虚线是一块 {gpu:g} GB 的 GPU：
# ~~ en ddd15de5
# Finally add the weights, gradients and Adam states (16 bytes per parameter in mixed precision) and draw the GB each rank holds during one iteration at $p={p}$, $m={m}$ (the embedding on the first stage, lm_head and the loss's logits on the last). The dashed line is a {gpu:g} GB GPU:

# %% [text] gb-compare
# ~~ zh 7db03609
# GPipe 的每个 rank 都要存下全部 {m} 个 micro-batch，峰值 **{gpipe:.1f} GB**，装不进 {gpu:g} GB；1F1B 的峰值在 rank 0，**{ofob:.1f} GB**，其中 {static:.1f} GB 是权重、梯度和优化器状态。两者 bubble 相同，1F1B 省下的全是激活。
# ~~ en 3f0f0eb8
# Every GPipe rank has to hold all {m} micro-batches, a peak of **{gpipe:.1f} GB**, which does not fit in {gpu:g} GB; 1F1B peaks on rank 0 at **{ofob:.1f} GB**, of which {static:.1f} GB are weights, gradients and optimizer states. The bubble is the same, so everything 1F1B saves is activations.

# %%
GPU, GB_P, GB_M = 80e9, 8, 32
md(text("static-intro", p=GB_P, m=GB_M, gpu=GPU / 1e9))
real = {s: pipeline_memory(build(s, GB_P, GB_M), GPT3, cfg_sel) for s in ("gpipe", "1f1b")}


def draw_gb(axes, memories, title):
    """Each schedule's bytes per rank over one iteration, side by side, against the GPU's capacity."""
    for ax, (name, pm) in zip(axes, memories.items()):
        plots.memory(pm.timeline, ax=ax, curves=pm.curves(), gpu_mem=GPU, title=f"{title}, {name}")


fig, axes = figure.subplots(1, 2, figsize=(14, 3.6), sharey=True)
draw_gb(axes, real, f"GPT-3 175B, p={GB_P}, m={GB_M}, tp={TP} + SP")
figure.show()
peak_gpipe, peak_1f1b = (max(pm.peak) for pm in real.values())
md(claim(peak_gpipe > GPU >= peak_1f1b and real["1f1b"].peak.index(peak_1f1b) == 0,
         text("gb-compare", m=GB_M, gpipe=peak_gpipe / 1e9, gpu=GPU / 1e9, ofob=peak_1f1b / 1e9,
              static=real["1f1b"].ranks[0].static / 1e9),
         gpipe=peak_gpipe, one_f_one_b=peak_1f1b))

# %% [markdown] llama
# ~~ zh 4f90ac26
# 下面换成 Llama 3 70B（$s=8192$，GQA、SwiGLU，没有 dropout；`course.memory` 按这种 block 的真实张量逐项计数）。这里按 **eager attention** 计数：softmax 的输出（每层 $2as^2b$ 字节）存下来给反向用。拖动 $p$、$m$、TP 和激活重计算的方式，看每个 rank 的 GB（左：权重、梯度、优化器状态和激活峰值叠在一起；右：一次迭代中持有的字节）和 GPU 容量那条虚线。TP 大于 1 时同时打开 SP。
# ~~ en 8c95c809
# Now Llama 3 70B ($s=8192$, GQA, SwiGLU, no dropout; `course.memory` counts the real tensors of this block one by one). The count here assumes **eager attention**: the softmax output ($2as^2b$ bytes per layer) is kept for the backward. Move $p$, $m$, TP and the recomputation setting and watch each rank's GB (left: weights, gradients, optimizer states and the activation peak stacked; right: the bytes held during one iteration) against the dashed line of the GPU's capacity. SP is on whenever TP is above 1.

# %%
memory_explorer("llama3-70b", seq=8192, gpu_mem=GPU)

# %% [markdown] task-recompute
# ~~ zh 2071a1b3
# **任务：** 在上面的 widget 里保持 $p=8$、$m=16$、TP=8，依次换三种激活重计算方式（widget 按 eager attention 计数）。哪几种能让所有 rank 都装进 80 GB？按 none、selective、full 的顺序写成列表。
# ~~ en f0f1abbf
# **Task:** in the widget above keep $p=8$, $m=16$ and TP=8 and try the three recomputation settings in turn (the widget counts eager attention). Which of them fit every rank into 80 GB? Write a list in the order none, selective, full.

# %%
answer_recompute_fits = None   # e.g. ["full"]

# %% [text] recompute-answer
# ~~ zh 0f69c9cf
# $p={p}$、$m={m}$、TP={tp} 时三种方式的峰值（eager attention）：{peaks}。序列长到 {seq} 时，不重新计算的注意力分数（$2as^2b$，每层每个 micro-batch 在每个 TP rank 上 {scores:.2f} GB）一项就压垮了 rank 0。
#
# 但 Llama 3 是用 FlashAttention 训练的：它从不存下 $s \times s$ 的分数，反向时重新计算，只留每行一个 fp32 的 log-sum-exp（每层 $4asb$ 字节）。选择性激活重计算去掉的恰好就是分数这一项（`course.memory` 里 Llama block 的注意力核心只有它），所以在 FlashAttention 下，none 的峰值就是 selective 的 {selective:.1f} GB 加上 rank 0 至多 {lse:.2f} GB 的 log-sum-exp，共 **{flash:.1f} GB**，装得进 {gpu:g} GB：用了 FlashAttention，这个设置不必再做激活重计算。
# ~~ en 7009d7a3
# The peaks of the three settings at $p={p}$, $m={m}$, TP={tp} (eager attention): {peaks}. At a sequence length of {seq}, the attention scores kept without recomputation ($2as^2b$: {scores:.2f} GB per layer and micro-batch on each TP rank) are enough to sink rank 0.
#
# But Llama 3 is trained with FlashAttention, which never stores the $s \times s$ scores: it recomputes them in the backward and keeps only an fp32 log-sum-exp per row ($4asb$ bytes per layer). Selective recomputation removes exactly the score term (in `course.memory`'s Llama block it is the whole attention core), so under FlashAttention the "none" setting peaks at the selective {selective:.1f} GB plus at most {lse:.2f} GB of log-sum-exp on rank 0, **{flash:.1f} GB** in all, and fits in {gpu:g} GB: with FlashAttention this layout needs no activation recomputation.

# %%
LLAMA70 = PRESETS["llama3-70b"]
TASK_P, TASK_M, TASK_TP, TASK_SEQ = 8, 16, 8, 8192
peaks_70b = {rc: max(pipeline_memory(build("1f1b", TASK_P, TASK_M), LLAMA70,
                                     ActivationConfig(TASK_SEQ, 1, TASK_TP, True, rc)).peak) for rc in RECOMPUTE}
fits_70b = [rc for rc, peak in peaks_70b.items() if peak <= GPU]
core = [term for term in layer_terms(LLAMA70, TASK_SEQ) if term.core]          # what selective recomputes
scores = 2 * LLAMA70.heads * TASK_SEQ * TASK_SEQ                               # 2as^2b bytes, b = 1
lse = LLAMA70.layers * 4 * LLAMA70.heads * TASK_SEQ // TASK_TP   # rank 0: p micro-batches x L/p layers x 4asb/t
flash_none = peaks_70b["selective"] + lse
md(reveal(answer_recompute_fits, fits_70b, claim(
    [term.size for term in core] == [scores] and peaks_70b["none"] > GPU >= flash_none,
    text("recompute-answer", p=TASK_P, m=TASK_M, tp=TASK_TP, seq=TASK_SEQ,
         peaks=" · ".join(f"{rc} {peak / 1e9:.1f} GB" for rc, peak in peaks_70b.items()),
         scores=scores / TASK_TP / 1e9, selective=peaks_70b["selective"] / 1e9, lse=lse / 1e9,
         flash=flash_none / 1e9, gpu=GPU / 1e9),
    peaks=peaks_70b, flash=flash_none)))

# %% [markdown] exercises-4
# ~~ zh 01c99f6e
# 练习 `one-f-one-b-order` 让你在有点对点延迟时找出每个 stage 最少要几个 warm-up 前向（那时 $p-s-1$ 就不够了），`peak-activations` 让你从每个 rank 的操作序列算出峰值激活，`seed-scheduler` 让你用模拟器检验种子博客里的 1F1B 调度器：它给每个 stage 同一份顺序。
#
# ## 5. 会卡死的 plan
#
# 下面两个 rank 各自的顺序都合法（每个 B 都在自己的 F 之后），`validate()` 也通过；但 rank 0 做完 $F_0$ 就去等 $B_0$ 的梯度，而 rank 1 第一件事是等 $F_1$，$F_1$ 却排在 rank 0 的 $B_0$ 之后：
# ~~ en 41e6eeed
# The exercise `one-f-one-b-order` has you find the shortest warm-up per stage when transfers have latency (then $p-s-1$ is no longer enough), `peak-activations` has you compute the peak activations from each rank's sequence of operations, and `seed-scheduler` has you test the seed blog's 1F1B scheduler, which gives every stage the same order, with the simulator.
#
# ## 5. Plans that deadlock
#
# Each of the two ranks below has a valid order of its own (every B after its own F), and `validate()` accepts the plan; but rank 0, after $F_0$, waits for $B_0$'s gradient, while rank 1 first waits for $F_1$, which rank 0 runs only after $B_0$:

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

# %% [markdown] deadlock-report
# ~~ zh 2447f9fb
# 模拟器不会无限循环：队列空了而还有 rank 没做完，它就报告每个卡住的 rank 停在哪一步、缺哪个操作、那个操作排在谁的第几步。真实的多进程程序遇到同样的 plan 会一直挂着，第 3 章和第 8 章会看到怎样用看门狗和这份清单找到它。
#
# ## 6. 不均匀的 stage
#
# 真实模型很难切得一样重：最后一个 stage 常常多了 lm_head 和 loss，第一个 stage 多了 embedding。`Costs` 的 `f`、`b`、`w` 可以给一个列表，每个 stage 一个值。
# ~~ en 6321eaa1
# The simulator never loops forever: when the queue is empty and some rank has not finished, it reports where each stuck rank stopped, which operation it lacks, and at which step of which rank that operation sits. A real multi-process program given the same plan would hang; chapters 3 and 8 show how a watchdog and this very list find it.
#
# ## 6. Uneven stages
#
# Real models are hard to cut into equally heavy stages: the last stage often carries lm_head and the loss, the first one the embedding. `Costs` accepts a list for `f`, `b` and `w`, one value per stage.

# %% [markdown] predict-heavy
# ~~ zh 196dbf78
# **预测：** $p=4$ 个 stage 里有一个比别的重一半（F、b、w 都 ×1.5）。它放在哪个位置（0 到 3）时 1F1B 的 makespan 最短？GPipe 呢？写成 `[1F1B 最短的位置, GPipe 最短的位置]`，每项是一个列表，一样短的位置都列上。
# ~~ en 0a115874
# **Predict:** one of $p=4$ stages is half again as heavy as the others (F, b and w all ×1.5). At which position (0 to 3) does it give 1F1B the shortest makespan? And GPipe? Write `[1F1B's shortest positions, GPipe's shortest positions]`, each a list holding every position tied for the shortest.

# %%
guess_heavy_positions = None   # e.g. [[3], [0]]

# %% [text] heavy-table
# ~~ zh 0f6ccada
# | 重 stage 的位置 | 1F1B 的 makespan | GPipe 的 makespan |
# |---|---|---|
# ~~ en c6e7872d
# | heavy stage's position | 1F1B's makespan | GPipe's makespan |
# |---|---|---|

# %% [text] heavy-reveal
# ~~ zh bb0326ad
# 1F1B 里重的 stage 越靠前越好：从位置 0 到 {last}，makespan 是 {spans}。重 stage 是瓶颈，它自己的空闲决定了多出来的时间：放在最前面，它一开始就有活干，做完最后一个反向整个迭代也就结束了；放在最后，开头要等前面所有的前向，结尾还要等梯度穿过前面所有 stage。GPipe 在 {n} 个位置都是 {gpipe:g}：它先做完全部前向，位置不影响。
#
# 这条规律在 {checked} 个随机点上核对过（{space}，$h$ 是重 stage 的倍数）：$m \ge p$ 时，重 stage 每往后挪一个位置，1F1B 的 makespan 都严格变长；$m < p$ 时至少有两个相邻的位置一样长（$m = 1$ 时所有位置都一样：唯一的 micro-batch 总要走完每个 stage），但往后挪从不变短。GPipe 在每个点上都与位置无关。
# ~~ en 994537a7
# In 1F1B the heavy stage is best at the front: from position 0 to {last} the makespans are {spans}. The heavy stage is the bottleneck, and its own idle time is what the iteration loses: at the front it has work from the very first moment, and its last backward ends the iteration; at the back it first waits for the forwards of every stage before it, and at the end the last gradient still has to cross all those stages. GPipe takes {gpipe:g} at all {n} positions: it runs all its forwards first, so the position does not matter.
#
# The rule was checked at {checked} random points ({space}, where $h$ is how many times heavier the heavy stage is): for $m \ge p$, every step the heavy stage moves back makes 1F1B's makespan strictly longer; for $m < p$ at least two neighbouring positions tie (at $m = 1$ all of them do: the only micro-batch has to cross every stage anyway), but moving back never makes it shorter. GPipe does not depend on the position at any point.

# %%
HEAVY = 1.5
BASE = Costs(f=1.0, b=1.0, w=1.0)     # an ordinary stage: F = 1, full backward b + w = 2


def heaviness(p, h, position):
    return [h if s == position else 1.0 for s in range(p)]


def heavy_costs(p, h, position):
    """BASE on every stage but ``position``, which is h times heavier in F, b and w."""
    scale = heaviness(p, h, position)
    return Costs(f=[BASE.f * x for x in scale], b=[BASE.b * x for x in scale], w=[BASE.w * x for x in scale])


def stage_times(p, h, position):
    """F + full backward of one micro-batch on each stage."""
    return [(BASE.f + BASE.b + BASE.w) * x for x in heaviness(p, h, position)]


def makespans_by_position(schedule, p, m, h):
    compiled = CompiledPlan(build(schedule, p, m))
    return [compiled.simulate(heavy_costs(p, h, k)).makespan for k in range(p)]


def shortest(spans):
    return [k for k, x in enumerate(spans) if x <= min(spans) + 1e-9]


ofob_spans, gpipe_spans = makespans_by_position("1f1b", P, M, HEAVY), makespans_by_position("gpipe", P, M, HEAVY)
md(text("heavy-table") + "\n" + "\n".join(f"| {k} | {a:g} | {g:g} |" for k, (a, g) in
                                          enumerate(zip(ofob_spans, gpipe_spans))))


def position_rule(p, m, h):
    """1F1B: strictly longer the later the heavy stage exactly when m >= p, never shorter; GPipe: no change."""
    a = makespans_by_position("1f1b", p, m, h)
    g = makespans_by_position("gpipe", p, m, h)
    rises = [y - x for x, y in zip(a, a[1:])]
    strict = all(d > 1e-9 for d in rises)
    return strict == (m >= p) and all(d > -1e-9 for d in rises) and max(g) - min(g) < 1e-9


HEAVY_SPACE = {"p": (2, 8), "m": (1, 24), "h": (1.05, 4.0)}
position_sw = sweep(position_rule, HEAVY_SPACE, n=250, seed=6)
md(reveal(guess_heavy_positions, [shortest(ofob_spans), shortest(gpipe_spans)], claim(
    all(x < y for x, y in zip(ofob_spans, ofob_spans[1:])) and len(set(gpipe_spans)) == 1 and position_sw.holds,
    text("heavy-reveal", last=P - 1, spans=" / ".join(f"{x:g}" for x in ofob_spans), n=P, gpipe=gpipe_spans[0],
         checked=position_sw.checked, space=ranges(HEAVY_SPACE)),
    makespans=ofob_spans, **position_sw.figures())))

# %% [markdown] worst-case
# ~~ zh eb4647a9
# 看最坏的情形：最后一个 stage 重一半。
# ~~ en c312adf7
# Now the worst case: the last stage half again as heavy.

# %% [text] heavy-last
# ~~ zh 437fdb1b
# makespan 从 {base:g} 变成 **{uneven:g}**，bubble 从 {base_bubble:.1%} 变成 **{uneven_bubble:.1%}**（两次都是 F={f:g}、完整反向 {backward:g}，只是最后一个 stage 重了 {h:g} 倍）。最慢的 stage 必须做完自己的 {m} 份活，这给了下界 $m \cdot \max_s(F_s+B_s)$ = {bound:g}；实际多出的 {extra:g} 是它的等待：开头等前面的 stage 把第一个 micro-batch 送过来，结尾等最后一个梯度穿过前面的 stage。重 stage 在最后时，makespan 正好是 $(m-1)\max_s(F_s+B_s) + \sum_s(F_s+B_s)$ = {formula:g}，在 {checked} 个随机点上都成立（{space}）。同样的总工作量平均分给 {p} 个 stage，makespan 是 {balanced:g}。怎样切得更匀，是第 7 章的话题。
# ~~ en 39887b6b
# The makespan goes from {base:g} to **{uneven:g}** and the bubble from {base_bubble:.1%} to **{uneven_bubble:.1%}** (F = {f:g} and a full backward of {backward:g} both times; only the last stage is {h:g} times heavier). The slowest stage must do all {m} of its micro-batches, which gives the lower bound $m \cdot \max_s(F_s+B_s)$ = {bound:g}; the {extra:g} on top is its waiting: at the start for the stages before it to deliver the first micro-batch, at the end for the last gradient to cross the stages before it. With the heavy stage last the makespan is exactly $(m-1)\max_s(F_s+B_s) + \sum_s(F_s+B_s)$ = {formula:g}, which holds at all {checked} random points checked ({space}). The same total work spread evenly over {p} stages takes {balanced:g}. How to cut more evenly is chapter 7's subject.

# %%
uneven = heavy_costs(P, HEAVY, P - 1)
base_tl = simulate(build("1f1b", P, M), BASE)
uneven_tl = simulate(build("1f1b", P, M), uneven)
plots.gantt(uneven_tl, title=f"1F1B, stage {P - 1} {HEAVY:g}x heavier")
figure.show()


def heavy_last_formula(p, m, h):
    times = stage_times(p, h, p - 1)
    return (m - 1) * max(times) + sum(times)


def heavy_last_rule(p, m, h):
    """The closed form of the heavy-last makespan, against the simulator."""
    got = simulate(build("1f1b", p, m), heavy_costs(p, h, p - 1)).makespan
    return math.isclose(got, heavy_last_formula(p, m, h), rel_tol=1e-12)


LAST_SPACE = {"p": (1, 8), "m": (1, 24), "h": (1.0, 4.0)}
last_sw = sweep(heavy_last_rule, LAST_SPACE, n=250, seed=7)
bound = M * max(stage_times(P, HEAVY, P - 1))    # the slowest stage must do all of its own work
even = sum(heaviness(P, HEAVY, P - 1)) / P        # the same total work spread evenly
balanced = simulate(build("1f1b", P, M), Costs(f=BASE.f * even, b=BASE.b * even, w=BASE.w * even))
md(claim(uneven_tl.makespan > bound and balanced.makespan < uneven_tl.makespan and last_sw.holds
         and abs(uneven_tl.makespan - heavy_last_formula(P, M, HEAVY)) < 1e-9,
         text("heavy-last", base=base_tl.makespan, uneven=uneven_tl.makespan, base_bubble=base_tl.bubble_ratio,
              uneven_bubble=uneven_tl.bubble_ratio, f=BASE.f, backward=BASE.b + BASE.w, h=HEAVY, m=M, bound=bound,
              extra=uneven_tl.makespan - bound, formula=heavy_last_formula(P, M, HEAVY), checked=last_sw.checked,
              space=ranges(LAST_SPACE), p=P, balanced=balanced.makespan),
         makespan=uneven_tl.makespan, bound=bound, balanced=balanced.makespan, **last_sw.figures()))

# %% [markdown] latency
# ~~ zh 95aad89b
# ## 7. 点对点延迟
#
# `Costs(comm=c)`：一个操作的结果送到另一个 rank 要多花 $c$。
# ~~ en 93523b1a
# ## 7. Point-to-point latency
#
# `Costs(comm=c)`: an operation's result takes an extra $c$ to reach another rank.

# %% [markdown] predict-latency
# ~~ zh 466c7402
# **预测：** 每次跨 rank 的传输多花 $c=1$ 个单位，GPipe 和 1F1B 的 makespan 各多出多少？写成 `[GPipe, 1F1B]`。
# ~~ en 4b06413d
# **Predict:** if every transfer between ranks takes $c=1$ extra unit, how much longer do GPipe and 1F1B take? Write `[GPipe, 1F1B]`.

# %%
guess_latency = None   # e.g. [6, 6]

# %% [text] latency-reveal
# ~~ zh cd75746c
# 延迟 c={c:g} 时（F={f:g}、完整反向 {backward:g}），GPipe 多了 **{gpipe:g}** = $2(p-1)c$：只有灌满和排空各走一遍 $p-1$ 条链路，中间的传输都被后面排队的 micro-batch 盖住了。1F1B 多了 **{ofob:g}**：稳定阶段里 rank 0 做完一个前向就等一个更早的 micro-batch 的梯度回来，往返路上的每一次延迟都变成了空闲。在 {checked} 个随机点上（{space}），GPipe 多出的总是正好 $2(p-1)c$，1F1B 多出的在 $m \ge 3$ 时总是更多、在 $m \le 2$ 时一样多。1F1B 省显存的代价之一就是对延迟更敏感；实际系统靠异步发送、把通信和计算重叠来遮住它。
# ~~ en ee9ecda1
# With a latency of c = {c:g} (F = {f:g}, full backward {backward:g}) GPipe takes **{gpipe:g}** longer = $2(p-1)c$: only the fill and the drain cross the $p-1$ links once each, and every transfer in between is hidden behind the micro-batches queued after it. 1F1B takes **{ofob:g}** longer: in the steady state rank 0, after each forward, waits for the gradient of an earlier micro-batch, and every latency on that round trip becomes idle time. At all {checked} random points ({space}) GPipe's extra time is exactly $2(p-1)c$, while 1F1B's is always larger for $m \ge 3$ and the same for $m \le 2$. Being more sensitive to latency is part of the price of 1F1B's memory savings; real systems hide it with asynchronous sends that overlap communication and computation.

# %%
latencies = [0.0, 0.25, 0.5, 1.0]
span = {s: [simulate(build(s, P, M), Costs(f=BASE.f, b=BASE.b, w=BASE.w, comm=c)).makespan for c in latencies]
        for s in ("gpipe", "1f1b")}


def draw_latency(ax, latencies, span, title):
    """Each schedule's makespan against the point-to-point latency."""
    for name, ys in span.items():
        ax.plot(latencies, ys, "o-", label=name)
    ax.set_xlabel("p2p latency c (cost units)")
    ax.set_ylabel("makespan")
    ax.set_title(title, fontsize=10)
    ax.legend()


fig, ax = figure.subplots(figsize=(6, 3))
draw_latency(ax, latencies, span, f"p={P}, m={M}, F={BASE.f:g}, backward={BASE.b + BASE.w:g}")
figure.show()
c = latencies[-1]
extra = {s: span[s][-1] - span[s][0] for s in span}


def latency_rule(p, m, f, backward, c):
    """GPipe pays exactly 2(p-1)c of latency; 1F1B pays more exactly when m >= 3."""
    paid = {}
    for s in ("gpipe", "1f1b"):
        compiled = CompiledPlan(build(s, p, m))
        paid[s] = (compiled.simulate(Costs(f=f, b=backward, w=0.0, comm=c)).makespan
                   - compiled.simulate(Costs(f=f, b=backward, w=0.0)).makespan)
    return math.isclose(paid["gpipe"], 2 * (p - 1) * c, rel_tol=1e-9) and (paid["1f1b"] > paid["gpipe"] + 1e-9) == (m >= 3)


LATENCY_SPACE = {"p": (2, 8), "m": (1, 24), "f": (0.5, 2.0), "backward": (0.5, 4.0), "c": (0.01, 1.0)}
latency_sw = sweep(latency_rule, LATENCY_SPACE, n=250, seed=8)
md(reveal(guess_latency, [extra["gpipe"], extra["1f1b"]], claim(
    extra["1f1b"] > extra["gpipe"] and abs(extra["gpipe"] - 2 * (P - 1) * c) < 1e-9 and latency_sw.holds,
    text("latency-reveal", c=c, f=BASE.f, backward=BASE.b + BASE.w, gpipe=extra["gpipe"], ofob=extra["1f1b"],
         checked=latency_sw.checked, space=ranges(LATENCY_SPACE)),
    gpipe=extra["gpipe"], one_f_one_b=extra["1f1b"], **latency_sw.figures())))

# %% [markdown] browser
# ~~ zh bcd2c276
# ## 8. 调度浏览器
#
# 选一个调度，改 $p$、$m$、各操作耗时和延迟，看时间线（左）和激活（右）怎么变。列表里还有后面几章的调度，可以先看个样子：
#
# - `interleaved`、`interleaved-flex`（第 4 章，这里取 $v=2$）：每个 rank 持有几个不相邻的 chunk；
# - `zb-h1`、`zb-h2`（第 5 章）：把反向拆成输入梯度 B 和权重梯度 W，用延后的 W 填 bubble；
# - `zbv`、`dualpipe`、`dualpipev`（第 6 章）：V 形放置和双向流水线；
# - `v-min`、`v-half`、`v-zb`（Qi 等人 2024，*Pipeline Parallelism with Controllable Memory*，第 5 章）：V 形放置加拆分的反向，把每个 rank 的激活峰值控制在 1F1B 的约 1/3、1/2 和 1 倍（见第 4.1 节）。
#
# `backward` 是一个 micro-batch 在一个 stage 上的完整反向耗时，拆分 B、W 的调度各分一半。不满足某个调度要求的参数组合，图里会写出原因。
# ~~ en d692eeb4
# ## 8. The schedule browser
#
# Pick a schedule, change $p$, $m$, the durations and the latency, and watch the timeline (left) and the activations (right). The list also holds the later chapters' schedules, for a first look:
#
# - `interleaved`, `interleaved-flex` (chapter 4, here with $v=2$): every rank holds several chunks that are not neighbours;
# - `zb-h1`, `zb-h2` (chapter 5): the backward split into the input gradient B and the weight gradient W, with deferred W's filling the bubble;
# - `zbv`, `dualpipe`, `dualpipev` (chapter 6): the V-shape placement and bidirectional pipelines;
# - `v-min`, `v-half`, `v-zb` (Qi et al. 2024, *Pipeline Parallelism with Controllable Memory*, chapter 5): a V-shape placement with a split backward, ordered to keep every rank's activation peak at about 1/3, 1/2 and 1 times 1F1B's (see section 4.1).
#
# `backward` is one micro-batch's full backward on one stage; schedules that split B and W give each half of it. A combination of parameters a schedule does not allow is drawn as the reason why.

# %% [text] browser-defaults
# ~~ zh 2181a701
# widget 的默认值：$p={p}$、$m={m}$、F={f:g}、backward={backward:g}、comm={comm:g}。
# ~~ en 57d229c8
# The widget's defaults: $p={p}$, $m={m}$, F = {f:g}, backward = {backward:g}, comm = {comm:g}.

# %%
SCHEDULES = list(REGISTRY)
DEFAULTS = {"p": 4, "m": 8, "F": 1.0, "backward": 2.0, "comm": 0.0}


def browse_plan(schedule, p, m):
    return build(schedule, p, m, **({"v": 2} if "v" in REGISTRY[schedule].params else {}))


def schedule_explorer(fig, schedule, p, m, F, backward, comm):
    gantt_ax, mem_ax = fig.subplots(1, 2, width_ratios=[2.2, 1])
    costs = Costs(f=F, b=backward / 2, w=backward / 2, comm=comm)   # split schedules: B and W get half each
    try:
        tl = simulate(browse_plan(schedule, p, m), costs)
    except ValueError as err:   # a (p, m) this schedule does not allow: say why instead of drawing
        gantt_ax.text(0.02, 0.5, f"{schedule}, p={p}, m={m}:\n{err}", wrap=True, va="center", fontsize=10)
        gantt_ax.set_axis_off()
        mem_ax.set_axis_off()
        return
    plots.gantt(tl, ax=gantt_ax)
    plots.memory(tl, ax=mem_ax)


md(text("browser-defaults", p=DEFAULTS["p"], m=DEFAULTS["m"], f=DEFAULTS["F"], backward=DEFAULTS["backward"],
        comm=DEFAULTS["comm"]))
explore(schedule_explorer, figsize=(13, 4), schedule=SCHEDULES[1:2] + SCHEDULES[:1] + SCHEDULES[2:],
        p=(2, 8, DEFAULTS["p"]), m=(1, 16, DEFAULTS["m"]), F=(0.5, 2.0, DEFAULTS["F"], 0.25),
        backward=(0.5, 4.0, DEFAULTS["backward"], 0.25), comm=(0.0, 1.0, DEFAULTS["comm"], 0.05))

# %% [markdown] task-fastest
# ~~ zh 9b651731
# **任务：** 保持 widget 的默认值（印在 widget 上方），逐个切换调度，找出最短的 makespan，把这个数填进下一格。
# ~~ en d5b88843
# **Task:** keep the widget's defaults (printed above it), switch through the schedules, find the shortest makespan and enter that number in the next cell.

# %%
answer_shortest = None   # e.g. 33

# %% [text] fastest
# ~~ zh 5b9ccffc
# 各调度的 makespan：{spans}。最短的是 {best:g}，{names} 达到了它。后面几章逐个讲它们为什么更短、各自付出什么代价。
# ~~ en b7c1fd2c
# The schedules' makespans: {spans}. The shortest is {best:g}, reached by {names}. The later chapters take them one by one: why they are shorter, and what each pays for it.

# %%
default_costs = Costs(f=DEFAULTS["F"], b=DEFAULTS["backward"] / 2, w=DEFAULTS["backward"] / 2, comm=DEFAULTS["comm"])
spans_by_schedule = {name: simulate(browse_plan(name, DEFAULTS["p"], DEFAULTS["m"]), default_costs).makespan
                     for name in SCHEDULES}
best_span = min(spans_by_schedule.values())
md(reveal(answer_shortest, best_span, text(
    "fastest", spans=" · ".join(f"`{k}` {v:g}" for k, v in spans_by_schedule.items()), best=best_span,
    names=", ".join(f"`{k}`" for k, v in spans_by_schedule.items() if v == best_span))))

# %% [markdown] summary
# ~~ zh 668557b1
# ## 怎么讲清楚
#
# - **plan** 是调度的中间表示：每个 rank 的操作顺序加上 stage 的放置。它可以打印、手写、解析、校验，像论文里的表格一样读。
# - **依赖**：$F$ 从前往后传，$B$ 从后往前传；$B_i$ 还要等本 stage 的 $F_i$。调度只定 rank 内的顺序，跨 rank 的等待都来自依赖。
# - **事件驱动模拟**：rank 空闲且依赖到齐就开始；每一步一个完成事件，耗时可以是任意实数。队列空了还有没做完的，就是死锁，并且能说出谁在等谁。
# - **GPipe 与 1F1B**：各 stage 一样快时 bubble 相同；1F1B 的 stage $s$ 最多存 $\min(m, p-s)$ 份激活，GPipe 存 $m$ 份，所以 1F1B 是默认调度。换成字节，1F1B 的 rank 0 存下整个模型对一个 micro-batch 的激活，与 $p$ 无关；要省它，靠激活重计算、TP/SP、更小的 micro-batch、V-Min 这类调度、activation offload 或更轻的第一个 stage。
# - **不均匀的 stage**：最慢的 stage 决定节奏（下界 $m\cdot\max_s(F_s+B_s)$）；$m \ge p$ 时，在 1F1B 里它越靠后越慢，放在最后最伤。
# - **延迟**：点对点延迟在 GPipe 里只付在两头（$2(p-1)c$），在 1F1B 的稳定阶段里每一轮都要付（$m \ge 3$ 时）。
#
# ## 练习
#
# - `one-f-one-b-order`（★★☆）：有点对点延迟时，用模拟器找出每个 stage 最少要几个 warm-up 前向，既不死锁、也不比 GPipe 慢。
# - `event-simulator`（★★★）：实现事件驱动模拟器，包括死锁报告。
# - `peak-activations`（★☆☆）：从每个 rank 的操作序列算出它的峰值激活。
# - `heavy-stage-position`（★★☆）：用模拟器找出慢的 stage 放在哪里 1F1B 最快，再推出它放在最前面时的 makespan（本章只推了放在最后的情形）。
# - `seed-scheduler`（★★☆）：种子博客的 1F1B 调度器给每个 stage 同一份顺序。用模拟器找出它错在哪里，给出让它出错的例子，再把它改对。
#
# ```bash
# python practice/judge.py start one-f-one-b-order
# python practice/judge.py start event-simulator
# python practice/judge.py start peak-activations
# python practice/judge.py start heavy-stage-position
# python practice/judge.py start seed-scheduler
# ```
# ~~ en dfc9dd92
# ## How to explain it
#
# - A **plan** is a schedule's intermediate representation: each rank's order of operations plus the placement of the stages. It can be printed, written by hand, parsed and validated, and it reads like the tables in papers.
# - **Dependencies**: $F$ travels from front to back, $B$ from back to front, and $B_i$ also waits for $F_i$ on its own stage. A schedule fixes only the order within each rank; every wait across ranks comes from a dependency.
# - **Event-driven simulation**: a step starts once its rank is free and its dependencies are in; each step is one completion event, and durations may be any real numbers. Unfinished work when the queue runs empty is a deadlock, and the simulator can say who waits for whom.
# - **GPipe and 1F1B**: with equally fast stages their bubble is the same; stage $s$ of 1F1B stores at most $\min(m, p-s)$ micro-batches' activations and GPipe $m$, which is why 1F1B is the default. In bytes, 1F1B's rank 0 holds the whole model's activations for one micro-batch, whatever $p$ is; cutting that takes activation recomputation, TP/SP, a smaller micro-batch, a schedule such as V-Min, activation offload or a lighter first stage.
# - **Uneven stages**: the slowest stage sets the pace (lower bound $m\cdot\max_s(F_s+B_s)$); for $m \ge p$ it costs 1F1B more the later it sits, and most at the very end.
# - **Latency**: GPipe pays point-to-point latency only at the two ends ($2(p-1)c$); 1F1B pays it in every round of its steady state (for $m \ge 3$).
#
# ## Exercises
#
# - `one-f-one-b-order` (★★☆): with point-to-point latency, use the simulator to find the fewest warm-up forwards per stage that neither deadlock nor make the iteration slower than GPipe.
# - `event-simulator` (★★★): implement the event-driven simulator, deadlock report included.
# - `peak-activations` (★☆☆): compute each rank's peak activations from its sequence of operations.
# - `heavy-stage-position` (★★☆): find with the simulator where a slow stage hurts 1F1B least, then derive the makespan with it at the front (the chapter derived only the case at the back).
# - `seed-scheduler` (★★☆): the seed blog's 1F1B scheduler gives every stage the same order. Find with the simulator what is wrong with it, give a case that makes it fail, and fix it.
#
# ```bash
# python practice/judge.py start one-f-one-b-order
# python practice/judge.py start event-simulator
# python practice/judge.py start peak-activations
# python practice/judge.py start heavy-stage-position
# python practice/judge.py start seed-scheduler
# ```
