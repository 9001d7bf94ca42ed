# %% [markdown]
# # 第 8 章　实战：读 trace、找 hang、对上 torch、放进 3D 并行
#
# 前面几章的调度都在模拟器里排得整整齐齐。真实训练里拿到的是一条实测的 trace：哪里空了、为什么空、hang 住时停在哪，都要自己读出来。这一章在 $p$ 个 gloo 进程上真跑 plan（$p$ 见第 1 节的代码），把 trace 的空闲拆成调度本身的 bubble、不均衡、通信和开销，再看显存；然后故意造一个 hang，看怎样找到它；接着把课程的 plan 对应到 `torch.distributed.pipelining` 的 action；最后看 PP 在 TP、DP 之间的位置。术语见[术语表](glossary.md)。
#
# ## 自测
#
# 1. 一条实测时间线上的空闲，哪些算 bubble，哪些算 stage 不均衡？
# 2. 只看 trace，怎样估出点对点通信的延迟？
# 3. 多进程流水线挂住了，第一步该拿到什么信息？
# 4. 课程 plan 里的 `B3`，在 torch 的 action 里写成什么？
# 5. 为什么常见的布局是"TP 在节点内、PP 跨节点、DP 在最外层"？
#
# <details>
# <summary>参考答案</summary>
#
# 1. 只看空闲的位置分不出来：理想的 1F1B 里 rank 0 第一个操作之前和最后一个操作之后都没有空闲，它的 bubble 全部夹在操作中间。可靠的做法是把同一个 plan 模拟两遍：一遍用 trace 里量到的每个操作的时长，一遍让每个操作都取同类操作的平均时长。后者的空闲是调度本身的 bubble，前者多出来的是不均衡，实测比前者再多出来的是通信和各种开销。
# 2. 不要直接拿两个进程的时间戳相减（时钟有偏差）。在同一个 rank 上量一次往返：从发出激活到收回梯度等了多久，减去下游处理这个 micro-batch 用的时间（也在下游自己的时钟上量），剩下的一半就是单程延迟（加上排队和计时误差）。
# 3. 每个 rank 此刻停在哪个操作、在等（或在发）哪条消息：看门狗或超时报告、各进程的 Python 栈（py-spy dump、faulthandler）。再拿它去对 plan 的依赖，找出互相等待的环。
# 4. plan 里有 W 时，`B` 是输入梯度，torch 写作 `I`（如 `2I3`，数字依次是 stage、micro-batch）；没有 W 时，`B` 是完整反向，torch 也写 `B`（如 `2B3`）。
# 5. TP 每层都要做 all-reduce，通信量最大、对带宽最敏感，只能放在 NVLink 连着的节点内；PP 每个 micro-batch 只在相邻 stage 间传一次激活，量小、可以跨节点；DP 每次迭代只做一次梯度 all-reduce，而且能和反向重叠，放在最外层。
#
# </details>

# %%
import os
import re
import statistics
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import plots
from course.attribution import attribute, window_idle
from course.claims import claim, reveal
from course.costs import Costs
from course.live import DeadlockDetected, run_plan
from course.plan import Plan, ops_of
from course.schedules import build
from course.sim import DeadlockError, simulate
from course.torch_bridge import compare, load_in_torch, to_actions, torch_order
from course.widgets import explore


def md(text: str) -> None:
    """Show prose whose numbers come from this notebook's cells."""
    display(Markdown(text))

# %% [markdown]
# ## 1. 跑一次，拿到 trace
#
# `run_plan` 在 $p$ 个 gloo 进程上执行同一个 plan：真实的前向、反向（autograd），异步发送，所有参数梯度和单进程的参考结果逐一比较。`emulate=True` 把每个操作补齐到 `Costs` 规定的时长（1 个 cost unit = `unit_ms` 毫秒），这样一台普通电脑上测到的时间线，形状就和一个 GPU 集群上的一样，可以和模拟器逐格对照（本机的核数在下一格的输出里）。

# %%
P, M, UNIT_MS = 4, 8, 20
plan = build("1f1b", P, M)
run = run_plan(plan, Costs(), emulate=True, unit_ms=UNIT_MS)
print(f"{os.cpu_count()} logical CPUs for {P} rank processes")
print(run)

fig, axes = plt.subplots(2, 1, figsize=(10, 4.2))
plots.gantt(run.timeline, ax=axes[0])
plots.gantt(run.simulated, ax=axes[1])
fig.tight_layout()
plt.show()
md(claim(run.grad_ok, "梯度检查：通过", max_abs_err=run.max_abs_err) + f"（最大绝对误差 {run.max_abs_err:.1e}）。"
   f"实测 makespan **{run.measured_makespan * 1e3:.0f} ms**，模拟器预测 {run.simulated_makespan * 1e3:.0f} ms，"
   f"实测 / 模拟 = {run.ratio:.2f}。"
   + claim(run.ratio > 1, "多出来的部分是模拟器没有建模的东西：进程调度、消息收发、Python 本身的开销。",
           otherwise="实测没有比模拟长：补时（emulate）把每个操作补到了规定的时长，开销都藏在补时里了。"))

# %% [markdown]
# ## 2. 把空闲分类
#
# 一个 rank 的空闲按位置分三段：第一个操作开始之前（head）、操作与操作之间（gaps）、最后一个操作结束之后（tail）。一个诱人的读法是"head 和 tail 是灌满与排空，也就是 bubble；gaps 是在等别人（不均衡或通信）"。先在没有任何开销的理想模拟上检验它。

# %% [markdown]
# **预测：** 理想的 1F1B（本节的 $p$、$m$，默认代价），rank 0 的空闲里 head、gaps、tail 各是多少个 cost unit？写成 `[head, gaps, tail]`。

# %%
guess_rank0 = None      # [head, gaps, tail], e.g. [3, 0, 6]

# %%
def show_windows(tl, unit=1e3, suffix="ms"):
    lines = [f"| rank | busy ({suffix}) | head | gaps | tail |", "|---|---|---|---|---|"]
    for row in window_idle(tl):
        lines.append(f"| {row['rank']} | {row['busy'] * unit:.4g} | {row['head'] * unit:.4g} | "
                     f"{row['gaps'] * unit:.4g} | {row['tail'] * unit:.4g} |")
    md("\n".join(lines))


ideal = simulate(plan, Costs())
show_windows(ideal, unit=1, suffix="cost units")
ideal_rows = window_idle(ideal)
r0 = [ideal_rows[0][k] for k in ("head", "gaps", "tail")]
ideal_gaps = sum(r["gaps"] for r in ideal_rows)
ideal_idle = sum(r["head"] + r["gaps"] + r["tail"] for r in ideal_rows)

# %%
md(reveal(guess_rank0, r0,
          claim(r0[0] == 0 and r0[2] == 0 and r0[1] > 0,
                f"理想的 1F1B 没有任何通信和不均衡，rank 0 却 head 和 tail 都是 0、gaps 是 {r0[1]:g}：它预热完要等第一个梯度回来，"
                f"稳定段之后又要等一个个反向回流，bubble 全部夹在操作中间。四个 rank 合计空闲 {ideal_idle:g}，其中 {ideal_gaps:g} 在 gaps 里。"
                "所以\"gaps = 不均衡或通信\"对 1F1B 是错的：位置分不出原因。", rank0=r0)))

# %% [markdown]
# 正确的做法是**拿 trace 自己的数字再模拟一遍**（`course.attribution.attribute`）：
#
# 1. 用 trace 里量到的每个操作的时长、零延迟，把同一个 plan 重放一遍（`course.replay.replay`）。它的空闲是调度和实际时长逼出来的；实测比它多出来的，是**通信和开销**（消息在路上、进程调度、计时误差）。
# 2. 每个操作都取同类操作（F、B、W、F&B）的平均时长，再重放一遍：总工作量不变、但完全均衡。它的空闲是**调度本身的 bubble**；第 1 步比它多出来的是**不均衡**。
#
# 空闲按一次迭代的矩形算（makespan 减去忙碌时间，即 bubble 占比的分子），所以每个 rank 上三部分相加正好是实测的空闲。

# %%
def show_attribution(plan, tl, unit=1e3, suffix="ms"):
    shares = attribute(plan, tl)
    lines = [f"| rank | idle ({suffix}) | schedule bubble | imbalance | comm / overhead |", "|---|---|---|---|---|"]
    for s in shares:
        assert abs(s.schedule + s.imbalance + s.overhead - s.idle) < 1e-9
        lines.append(f"| {s.rank} | {s.idle * unit:.0f} | {s.schedule * unit:.0f} | {s.imbalance * unit:.0f} | "
                     f"{s.overhead * unit:.0f} |")
    total = {k: sum(getattr(s, k) for s in shares) for k in ("idle", "schedule", "imbalance", "overhead")}
    lines.append(f"| all | {total['idle'] * unit:.0f} | {total['schedule'] * unit:.0f} | {total['imbalance'] * unit:.0f} | "
                 f"{total['overhead'] * unit:.0f} |")
    md("\n".join(lines))
    return total


balanced_total = show_attribution(plan, run.timeline)
sim_s = ideal_idle * UNIT_MS / 1e3
md(f"实测 bubble 占比 {run.timeline.bubble_ratio:.1%}，公式 $(p-1)/(m+p-1)$ 给出 {(P - 1) / (M + P - 1):.1%}。"
   f"所有 rank 合计空闲 {balanced_total['idle'] * 1e3:.0f} ms：调度本身 {balanced_total['schedule'] * 1e3:.0f} ms"
   f"（理想模拟是 {sim_s * 1e3:.0f} ms），不均衡 {balanced_total['imbalance'] * 1e3:.0f} ms，通信和开销 "
   f"{balanced_total['overhead'] * 1e3:.0f} ms。"
   + claim(balanced_total["schedule"] >= max(balanced_total["imbalance"], balanced_total["overhead"]),
           "均衡的 plan 在补时下，空闲的大头是调度本身的 bubble，另外两类是测量和开销带来的零头。",
           otherwise="这台机器上开销或不均衡比调度本身的 bubble 还大：进程在抢 CPU，操作超出了补时的长度。",
           total=balanced_total))

# %% [markdown]
# 同一条 trace 也可以导出成 Chrome trace-event JSON（`course.trace.write_trace`），用 Perfetto（ui.perfetto.dev）或 `chrome://tracing` 打开：每个 rank 一条轨道，每个操作一个事件，外加一条激活的计数器轨道。

# %%
from course.trace import write_trace  # noqa: E402
import json  # noqa: E402

trace_path = write_trace(Path(tempfile.mkdtemp()) / "1f1b_measured.json", run.timeline)
events = json.loads(trace_path.read_text())["traceEvents"]
ops_in_trace = [e for e in events if e["ph"] == "X"]
assert len(ops_in_trace) == sum(len(s) for s in plan.ranks)
print(f"{trace_path}: {len(ops_in_trace)} op events on {P} rank tracks; first: {ops_in_trace[0]}")

# %% [markdown]
# ## 3. 不均衡：一个 stage 比别人慢
#
# 让最后一个 stage 重一倍（比如它还要算 lm_head 和 loss），再跑一次：

# %%
heavy = [1.0, 1.0, 1.0, 2.0]
uneven_costs = Costs(f=heavy, b=heavy, w=heavy)   # full backward = b + w = 2 x forward
uneven = run_plan(plan, uneven_costs, emulate=True, unit_ms=UNIT_MS)
plots.gantt(uneven.timeline, title="1F1B measured, last stage 2x heavier")
plt.show()

# %% [markdown]
# **预测：** 和均衡的那次相比，这次所有 rank 合计的空闲里，哪一类（`"schedule"`、`"imbalance"`、`"overhead"`）涨得最多？

# %%
guess_grows = None      # "schedule", "imbalance" or "overhead"

# %%
uneven_total = show_attribution(plan, uneven.timeline)
growth = {k: uneven_total[k] - balanced_total[k] for k in ("schedule", "imbalance", "overhead")}
busy = uneven.timeline.busy
imbalance = max(busy) / statistics.mean(busy)
slowest = busy.index(max(busy))
shares = attribute(plan, uneven.timeline)
md(reveal(guess_grows, max(growth, key=growth.get),
          claim(uneven.grad_ok, "梯度检查通过。", max_abs_err=uneven.max_abs_err)
          + f"rank {slowest} 最忙：busy 是平均值的 **{imbalance:.2f}** 倍（max / mean，均衡时接近 1）。"
          f"三类空闲各涨了 {', '.join(f'{k} {v * 1e3:+.0f} ms' for k, v in growth.items())}。"
          + claim(max(growth, key=growth.get) == "imbalance" and shares[slowest].imbalance < 0,
                  f"涨的是不均衡：快的 rank 要等慢的 rank {slowest}，rank {slowest} 自己的不均衡一项是负的"
                  f"（{shares[slowest].imbalance * 1e3:.0f} ms，它比均衡时更忙、空得更少）。办法是重新切分层（第 7 章）。",
                  otherwise="这次测量里涨得最多的不是不均衡：开销盖过了它，可以重跑一次。",
                  growth=growth)))

# %% [markdown]
# ## 4. 通信：从 trace 里估延迟
#
# 最直接的想法是拿"上游结束"和"下游开始"两个时间戳相减。但它们来自两个进程的时钟：执行器只在离开同一个 barrier 时对齐时间原点，各进程离开 barrier 的时刻本身就差着零点几毫秒，相减常常得到负数。
#
# 可靠的办法是只用**同一个进程的时钟**量一次往返：rank $s$ 做完 $F_i$ 把激活发给 rank $s+1$，再等 $B_i$ 的梯度回来。在 rank $s$ 上量"从 $F_i$ 结束到 $B_i$ 开始"，在 rank $s+1$ 上量"从 $F_i$ 开始到 $B_i$ 结束"（它处理这个 micro-batch 用的时间）。只挑 rank $s$ 在 $B_i$ 之前正空着的那些 micro-batch（梯度一到就开始算），两者之差就是一去一回两次传输，再加上 rank $s+1$ 可能的排队。所以每个样本都不小于单程延迟（再加上计时误差）。

# %%
def one_way_estimates(tl, s):
    """Per micro-batch whose B_i found rank s idle: half of (rank s: F_i end -> B_i start) minus (rank s+1: F_i start
    -> B_i end), each on its own rank's clock: the one-way latency plus queueing, give or take timer noise."""
    def find(rank, kind, i):
        spans = tl.spans[rank]
        k = next(k for k, sp in enumerate(spans) if any(op.kind == kind and op.mb == i for op in ops_of(sp.step)))
        return k, spans[k]

    out = []
    for i in range(M):
        _, f = find(s, "F", i)
        k, b = find(s, "B", i)
        if tl.spans[s][k - 1].end >= b.start:   # rank s was busy until B_i started: no clean sample
            continue
        held = find(s + 1, "B", i)[1].end - find(s + 1, "F", i)[1].start
        out.append((b.start - f.end - held) / 2)
    return out


one_way = one_way_estimates(run.timeline, P - 2)
latency = max(statistics.median(one_way), 0.0)
what_if = simulate(plan, Costs(comm=latency * 1e3 / UNIT_MS))
negative = sum(1 for x in one_way if x < 0)
md(f"rank {P - 2} 与 rank {P - 1} 之间有 {len(one_way)} 次干净的往返，单程延迟的估计：中位数 **{statistics.median(one_way) * 1e3:.2f} ms**，"
   f"最小 {min(one_way) * 1e3:.2f} ms，最大 {max(one_way) * 1e3:.2f} ms。" +
   claim(negative == 0, "", otherwise=f"其中 {negative} 个样本是负的：本机进程之间的延迟比计时本身的抖动"
         "（sleep 多睡、进程被调度走）还小，这时只能说延迟在抖动以内。") +
   f"把中位数（{latency * 1e3 / UNIT_MS:.3f} 个 cost unit）放回模拟器，预测 makespan 从 "
   f"{run.simulated_makespan * 1e3:.0f} ms 变成 {what_if.makespan * UNIT_MS:.0f} ms，实测是 "
   f"{run.measured_makespan * 1e3:.0f} ms。" +
   claim(what_if.makespan * UNIT_MS < run.measured_makespan * 1e3,
         "剩下的差距来自每个操作自身的开销和进程调度，而不是传输。", otherwise="延迟已经解释了全部差距。") +
   "在 GPU 集群上跨节点的一跳是几十微秒到毫秒级、而且随激活大小增长，同样的读法能告诉你它是不是瓶颈；"
   "那时该做的是把发送和计算重叠起来，或者减少跨节点的 stage 边界。")

# %% [markdown]
# ## 5. 显存：谁存得最多
#
# 执行器按 plan 的顺序分配、释放激活：F 开始时多一份，这个 micro-batch 的反向做完时少一份。同一个模型换成 GPipe 再跑一次，对比两条实测曲线。

# %% [markdown]
# **预测：** GPipe 的激活峰值出现在哪个 rank 上？写 rank 编号，或者 `"all"`（每个 rank 一样高）。

# %%
guess_gpipe_peak = None     # a rank number or "all"

# %%
gpipe_run = run_plan(build("gpipe", P, M), Costs(), emulate=True, unit_ms=UNIT_MS)
fig, axes = plt.subplots(1, 2, figsize=(11, 3))
plots.memory(gpipe_run.timeline, ax=axes[0])
plots.memory(run.timeline, ax=axes[1])
fig.tight_layout()
plt.show()
def peak_ranks(tl):
    top = max(tl.peak_activations)
    return [r for r, x in enumerate(tl.peak_activations) if abs(x - top) < 1e-9]


zb_peaks = simulate(build("zb-h1", P, M), Costs()).peak_activations
gpipe_top = peak_ranks(gpipe_run.timeline)
md(reveal(guess_gpipe_peak, "all" if len(gpipe_top) == P else gpipe_top[0],
          f"GPipe 每个 rank 的峰值 {gpipe_run.timeline.peak_activations}，1F1B 是 {run.timeline.peak_activations}，"
          f"ZB-H1（模拟）是 {zb_peaks}；两次实测的 makespan 分别是 {gpipe_run.measured_makespan * 1e3:.0f} ms 和 "
          f"{run.measured_makespan * 1e3:.0f} ms。"
          + claim(len(gpipe_top) == P and peak_ranks(run.timeline) == [0] and len(set(zb_peaks)) == 1,
                  "只有 1F1B 的峰值集中在 rank 0；GPipe 和 ZB-H1 每个 rank 一样高。所以\"OOM 总是先发生在 rank 0\"并不成立，"
                  "要看调度。真实的大模型里还有另一头：最后一个 stage 要存 fp32 的 logits（$b \\times s \\times V$，词表 $V$ 上十万）"
                  "和 loss 的中间结果，常常是它先 OOM（Llama 3 的报告把首尾两头的不均衡都点了名）。"
                  "在 GPU 上，真实的字节数用 `torch.cuda.max_memory_allocated()` 按 rank 量。",
                  gpipe=gpipe_run.timeline.peak_activations, one_f_one_b=run.timeline.peak_activations, zb=zb_peaks)))

# %% [markdown]
# ## 6. 一个 hang，以及怎样找到它
#
# 第 3 章讲过：朴素的阻塞写法（操作开始时 recv、结束时阻塞 send）会让 1F1B 死锁；奇偶错序或批量收发（`batch_isend_irecv`）的阻塞写法则不会。把执行器换成朴素的阻塞 `send`，跑同一个 plan。启动器的看门狗发现所有没做完的 rank 都停在通信里、好几秒没有进展，就结束整个作业，并报告每个 rank 停在哪：

# %%
try:
    run_plan(plan, blocking_send=True, stall=2.0, timeout=60)
    hang = None
except DeadlockDetected as err:
    hang = err
    print(err)
assert hang is not None, "naive blocking sends were expected to deadlock 1F1B"

# %%
states = hang.states
senders = [r for r, s in states.items() if "blocked in send" in s]
sending = {}   # rank -> (what, to whom), read from the watchdog's report
for r, s in states.items():
    found = re.search(r"blocked in send of the (\w+) for (\S+) to rank (\d+)", s)
    if found:
        sending[r] = (found.group(1), found.group(2), int(found.group(3)))
cycles = sorted({tuple(sorted((a, b))) for a, (_, _, b) in sending.items() if sending.get(b, (0, 0, -1))[2] == a})
reading = "；".join(f"rank {a} 在发 {sending[a][0]}（给 {sending[a][1]}）给 rank {b}，rank {b} 却在发 "
                   f"{sending[b][0]}（给 {sending[b][1]}）给 rank {a}" for a, b in cycles)
md(f"{len(states)} 个 rank 里有 **{len(sending)}** 个停在 `send` 上，看门狗在 {hang.elapsed:.1f} s 时判定死锁。"
   + claim(bool(cycles), f"读法：{reading}。阻塞的 send 要等对方调用 recv 才返回，两边都在发、都没在收，形成一个环；"
           "其余 rank 堵在发给别的 rank 的 send 上，等的正是环里的人。",
           otherwise="这次报告里没有两个 rank 互相发送的环，逐个看每个 rank 在等谁。"))

# %% [markdown]
# 找 hang 的一般步骤：
#
# 1. **让它报出来，而不是一直挂着**：设置超时（`init_process_group(timeout=...)`、NCCL 的 watchdog），或者像这里一样用看门狗。
# 2. **拿到每个 rank 的位置**：它在执行 plan 的第几步、在等（发）哪条消息；各进程的 Python 栈（`py-spy dump --pid`、`faulthandler.dump_traceback_later`）。上面的报告里也带了每个 rank 的栈：`hang.stacks[rank]`。在 GPU 上用 NCCL 时，对应的工具是 NCCL 的 Flight Recorder（设 `TORCH_NCCL_TRACE_BUFFER_SIZE`，超时时每个 rank 导出最近的集合通信和点对点操作）、`NCCL_DEBUG=INFO` 和 `TORCH_NCCL_ASYNC_ERROR_HANDLING`（超时后让进程报错退出，而不是一直挂着）。
# 3. **对着 plan 找环**：谁在等谁。如果环是 plan 自己的（顺序排错了），在启动进程之前模拟器就能发现：`run_plan` 先模拟，一个会死锁的 plan 根本不会启动进程。

# %%
stuck = Plan.parse("F0 B0 F1 B1\nF1 B1 F0 B0")
try:
    run_plan(stuck, emulate=True)
except DeadlockError as err:
    print("refused before starting any process:", err)

# %% [markdown]
# ## 7. 对上 torch.distributed.pipelining
#
# torch 也把调度写成每个 rank 一串 action，打印形如 `2F0`：stage 2、前向、micro-batch 0。对应关系：
#
# | course plan | torch action |
# |---|---|
# | `F3`（stage s） | `sF3` |
# | `B3`，plan 里没有 W：完整反向 | `sB3` |
# | `B3`，plan 里有 W：输入梯度 | `sI3` |
# | `W3` | `sW3` |
# | `F3&B1`（重叠的一对） | 一个组合 action `(sF3;tB1)OVERLAP_F_B` |
#
# stage 编号取的是这个 stage 在 micro-batch 路线上的位置（交错调度里 rank 0 持有 stage 0 和 $p$，依此类推）。`course.torch_bridge.to_actions` 做这个转换；重叠的一对写成 torch 的 `_load_csv` 读得懂的组合 action；练习 `torch-actions` 要的也是这种写法。

# %%
for name in ("1f1b", "zb-h1"):
    print(name)
    for r, actions in enumerate(to_actions(build(name, 4, 4))):
        print(f"  rank {r}: {' '.join(actions)}")
runtime = load_in_torch(build("zb-h1", 4, 8))
md(f"`load_in_torch` 把 plan 写成 torch 的 CSV，交给 `{type(runtime).__name__}._load_csv`：torch 接受了它，"
   "并且自己补上了收发动作（`_load_csv` 是私有接口，换 torch 版本时可能变）。练习 `torch-actions` 让你写出这个转换。")

# %% [markdown]
# 反过来，把 torch 内置的调度类转成 plan，和课程自己的调度比一比（$p=4$、$m=8$）：

# %%
table = compare(4, 8)
lines = ["| torch class | course schedule | same ops | makespan torch / course | peak torch / course |",
         "|---|---|---|---|---|"]
for row in table:
    if "error" in row:
        lines.append(f"| {row['torch']} | {row['ours']} | order rejected: {row['error']} | | |")
    else:
        lines.append(f"| {row['torch']} | {row['ours']} | {row['same_ops']} | {row['torch_makespan']:g} / "
                     f"{row['ours_makespan']:g} | {row['torch_peak']:g} / {row['ours_peak']:g} |")
md("\n".join(lines))
rejected = [row for row in table if "error" in row]
same = sum(1 for row in table if row.get("same_ops"))
md(f"{len(table)} 个调度类里，{same} 个和课程的调度逐个操作相同。"
   + claim(not rejected, "没有被 `validate()` 拒绝的。",
           otherwise=f"被拒绝的有 {', '.join(row['torch'] for row in rejected)}：它们打印出来的 `pipeline_order` 通不过 `validate()`。"))

# %%
if any(row["torch"] == "Schedule1F1B" for row in rejected):
    order = torch_order("Schedule1F1B", P, M)
    last = " ".join(str(a) for a in order[P - 1])
    printed_mbs = [int(m_) for m_ in re.findall(r"[FBIW](\d+)", last)]
    torch_run = run_plan(plan, engine="torch")
    md(f"拿 Schedule1F1B 看：torch 打印的最后一个 rank 是 `{last}`。"
       f"而让 torch 的运行时真正执行同一个调度、记下的顺序是 `{' '.join(torch_run.timeline.ops(P - 1))}`，"
       + claim(torch_run.grad_ok, "梯度检查通过。", max_abs_err=torch_run.max_abs_err)
       + claim(max(printed_mbs) == M,
               f"打印出来的顺序错了一位：它出现了 micro-batch {M}，而 $m={M}$ 个 micro-batch 的编号只到 {M - 1}。"
               "这是 torch 打印调度表（`pipeline_order`）的一个显示 bug，执行走的是另一段代码，所以跑出来是对的；"
               "值得向上游报告。拿框架打印的调度表做对照之前，先让模拟器 validate 一遍，再看实测 trace。",
               otherwise="打印出来的调度表和实际执行的顺序不一致；拿框架的调度表做对照之前，先让模拟器 validate 一遍，再看实测 trace。",
               printed=printed_mbs))

# %% [markdown]
# ## 8. PP 在 TP 和 DP 之间
#
# 大模型训练把 GPU 排成三维：$N = d \times p \times t$（数据并行 × 流水线 × 张量并行）。每一维的通信模式不同：
#
# - **TP**（张量并行）：每层把矩阵切开，每个 micro-batch 每层 4 次 all-reduce（前向 2 次、反向 2 次），每次 $b\,s\,h$ 个元素。量最大、每层都要等，所以放在节点内（NVLink）。
# - **PP**：每个 micro-batch 在 stage 边界传一次激活、回传一次梯度，各 $b\,s\,h$ 个元素。开了 TP 时，一个 TP 组里的 $t$ 个 GPU 不必各发一整份：Megatron 的 scatter/gather 优化（或者序列并行下本来就切开的激活）让每个 GPU 只发 $1/t$，到对面再拼起来。量小，能跨节点；代价是 bubble。
# - **DP**：每次迭代对本 GPU 的参数梯度做一次 all-reduce，能和反向重叠，放在最外层。
#
# 还有一条把三者绑在一起的约束：全局 batch $G = d \cdot m \cdot b$。$d$ 越大，每个流水线分到的 micro-batch 数 $m$ 就越少，bubble 越大。这就是第 1 章说 $m$ 有上限的另一半原因。下面拿一个具体的模型和集群算一算（规模见代码开头；bf16 通信，每个参数的训练状态按混合精度 Adam 计）：

# %%
MODEL = {"layers": 32, "hidden": 4096, "seq": 4096}
WORLD = 64
BYTES = 2             # bf16 activations and gradients on the wire
STATE_BYTES = 16      # weights, gradients and Adam moments per parameter (mixed precision)
GPU_GB = 80           # one GPU's memory, for scale


def layout(tp: int, pp: int, global_batch: int, micro: int) -> dict:
    """Per-GPU traffic per iteration (GB), bubble and training state of one (d, p, t) layout."""
    if WORLD % (tp * pp):
        raise ValueError(f"tp x pp = {tp * pp} does not divide {WORLD} GPUs")
    dp = WORLD // (tp * pp)
    if global_batch % (dp * micro):
        raise ValueError(f"global batch {global_batch} is not a multiple of dp x micro = {dp * micro}")
    m = global_batch // (dp * micro)
    L, h, s = MODEL["layers"], MODEL["hidden"], MODEL["seq"]
    if L % pp:
        raise ValueError(f"{L} layers do not split into {pp} equal stages")
    act = micro * s * h * BYTES                              # one activation tensor of one micro-batch
    params = 12 * L * h * h / (pp * tp)                      # this GPU's parameters
    ring = lambda n: 2 * (n - 1) / n                          # ring all-reduce: bytes sent per byte reduced
    return {
        "dp": dp, "m": m,
        "TP": (L // pp) * m * 4 * ring(tp) * act / 1e9,
        "PP": (2 * m * act / tp / 1e9) if pp > 1 else 0.0,   # a middle stage; scatter/gather: 1/t per GPU
        "DP": ring(dp) * params * BYTES / 1e9,
        "bubble": (pp - 1) / (m + pp - 1),
        "state_GB": params * STATE_BYTES / 1e9,
    }


rows = ["| t × p × d | m | TP GB | PP GB | DP GB | bubble | state GB/GPU |", "|---|---|---|---|---|---|---|"]
for tp, pp in ((8, 1), (8, 4), (4, 4), (1, 8)):
    x = layout(tp, pp, global_batch=256, micro=1)
    rows.append(f"| {tp} × {pp} × {x['dp']} | {x['m']} | {x['TP']:.1f} | {x['PP']:.2f} | {x['DP']:.1f} | "
                f"{x['bubble']:.1%} | {x['state_GB']:.1f} |")
md(f"{MODEL['layers']} 层、$h={MODEL['hidden']}$、序列长 {MODEL['seq']} 的模型，{WORLD} 个 GPU，"
   f"每个参数的训练状态 {STATE_BYTES} 字节。每个 GPU 每次迭代发送的数据量（全局 batch 256 条序列，micro-batch 1 条；"
   "PP 按中间的 stage 算，首尾 stage 只发一个方向）：\n\n" + "\n".join(rows))
T_EX, P_EX = 8, 4
base = layout(T_EX, P_EX, 256, 1)

# %% [markdown]
# **预测：** 以 t=8、p=4 为例，TP 每个 GPU 每次迭代发送的数据量大约是 PP 的多少倍？

# %%
guess_tp_over_pp = None     # a ratio, e.g. 10

# %%
ratio_tp_pp = base["TP"] / base["PP"]
no_pp = layout(T_EX, 1, 256, 1)
md(reveal(guess_tp_over_pp, round(ratio_tp_pp),
          f"TP 每个 GPU 每次迭代要发 **{base['TP']:.0f} GB**，PP 只有 **{base['PP']:.2f} GB**（scatter/gather 之后，"
          f"不做这个优化是 {base['PP'] * T_EX:.1f} GB），DP 是 {base['DP']:.1f} GB。"
          + claim(ratio_tp_pp > 100 and base["TP"] > base["DP"],
                  f"TP 的量是 PP 的 {ratio_tp_pp:.0f} 倍，而且每层都卡在关键路径上，只能走节点内的高速互联；"
                  f"PP 的少量点对点传输可以放心跨节点，代价是 {base['bubble']:.1%} 的 bubble。",
                  tp=base["TP"], pp=base["PP"], dp=base["DP"]), rel_tol=0.25))
md(claim(no_pp["state_GB"] > base["state_GB"],
         f"不开 PP（t={T_EX}、p=1）时每个 GPU 的训练状态是 {no_pp['state_GB']:.1f} GB，是 t={T_EX}、p={P_EX} 的 "
         f"{no_pp['state_GB'] / base['state_GB']:.0f} 倍：模型再大几倍，一个 TP 组就装不下了，这时才需要 PP 按深度再切一刀。",
         no_pp=no_pp["state_GB"], with_pp=base["state_GB"]))

# %% [markdown]
# 自己排一排：GPU 总数固定为上面的 `WORLD`，选 TP 和 PP 的大小、全局 batch 和 micro-batch 大小，看每类通信量、bubble 和每个 GPU 的训练状态怎么变。排不出来的组合（GPU 数或 batch 除不尽），图上会写原因。

# %%
def layout_explorer(fig, tp, pp, global_batch, micro):
    comm_ax, info_ax = fig.subplots(1, 2, width_ratios=[1.3, 1])
    try:
        x = layout(tp, pp, global_batch, micro)
    except ValueError as err:
        comm_ax.text(0.02, 0.5, str(err), va="center", wrap=True)
        comm_ax.set_axis_off()
        info_ax.set_axis_off()
        return
    kinds = ["TP", "PP", "DP"]
    comm_ax.bar(kinds, [max(x[k], 1e-3) for k in kinds], color=["#C44E52", "#4C72B0", "#55A868"])
    comm_ax.set_yscale("log")
    comm_ax.set_ylabel("GB sent per GPU per iteration")
    comm_ax.set_title(f"t={tp} x p={pp} x d={x['dp']}, m={x['m']}", fontsize=10)
    for i, k in enumerate(kinds):
        comm_ax.text(i, max(x[k], 1e-3), f"{x[k]:.2f}", ha="center", va="bottom", fontsize=8)
    shares = {"bubble": x["bubble"], f"state / {GPU_GB} GB": x["state_GB"] / GPU_GB}
    info_ax.barh(list(shares), list(shares.values()), color=["#8C8C8C", "#DD8452"])
    for i, v in enumerate(shares.values()):
        info_ax.text(v, i, f" {v:.1%}", va="center", fontsize=8)
    info_ax.set_xlim(0, max(1.0, *shares.values()) * 1.15)
    info_ax.set_title(f"bubble {x['bubble']:.1%}, training state {x['state_GB']:.1f} GB per GPU", fontsize=10)


explore(layout_explorer, figsize=(11, 3.2), tp=[8, 1, 2, 4], pp=[4, 1, 2, 8, 16],
        global_batch=[256, 64, 128, 512, 1024], micro=[1, 2, 4])

# %% [markdown]
# **任务：** 固定 tp=8、pp=4、micro=1，在 `global_batch` 的可选值里找出让 bubble 降到 10% 以下的最小值，写进 `answer_global_batch`。

# %%
answer_global_batch = None  # one of 64, 128, 256, 512, 1024

# %%
under_10 = [g for g in (64, 128, 256, 512, 1024) if layout(8, 4, g, 1)["bubble"] < 0.10]
smallest = min(under_10) if under_10 else None
md(reveal(answer_global_batch, smallest,
          claim(smallest is not None,
                f"$d = {layout(8, 4, smallest, 1)['dp']}$ 条流水线分掉全局 batch，每条拿到 $m = G/d = {layout(8, 4, smallest, 1)['m']}$ 个 "
                f"micro-batch，bubble $(p-1)/(m+p-1) = {layout(8, 4, smallest, 1)['bubble']:.1%}$。全局 batch 通常由收敛性定死，"
                "所以 DP 越宽，每条流水线的 $m$ 越小，bubble 越大。", under_10=under_10)))

# %% [markdown]
# ### 8.1 把激活也算进来：哪种布局能把 70B 装进 64 张 80 GB
#
# 上面的 `state_GB` 只算了权重、梯度和优化器状态。真正决定装不装得下的，常常是激活：它取决于序列长度、TP/SP、重算方式，还取决于调度（第 2 章：1F1B 的卡 0 存着整个模型对一个 micro-batch 的激活）。`course.memory.fit_layouts` 把这些放在一起：对给定的 GPU 数和全局 batch，枚举 (tp, pp, dp, 调度, v, m, 重算) 的每种组合，用模拟器按每个 chunk 的激活字节和 FLOPs 折算的 F、B、W 时间跑一遍，留下最忙的卡也装得下的布局，按模拟的单步时间排序。命令行里是 `python -m course memory --fit`。
#
# 下面是 Llama 3 70B、序列长 8192、全局 batch 128 条序列、64 张 80 GB 的卡，优化器状态按 ZeRO-1 在 DP 组里切开，每张卡按 400 TFLOP/s 折算计算时间：

# %%
from collections import Counter

from course.memory import PRESETS, fit_layouts

LLAMA70 = PRESETS["llama3-70b"]
FIT = dict(gpus=64, gpu_mem=80e9, global_batch=128, seq=8192, zero=1, flops_per_s=400e12)
fits = fit_layouts(LLAMA70, **FIT)
md(f"{len(fits)} 种布局装得下，最快的 10 种：\n\n| tp | pp | dp | 调度 | v | m | 重算 | 最忙的卡 | bubble | 模拟单步 |\n"
   "|---|---|---|---|---|---|---|---|---|---|\n"
   + "\n".join(f"| {r['tp']} | {r['pp']} | {r['dp']} | {r['schedule']} | {r['v'] or ''} | {r['m']} | {r['recompute']} | "
               f"{r['peak_bytes'] / 1e9:.1f} GB | {r['bubble']:.1%} | {r['step_s']:.2f} s |" for r in fits[:10]))

# %%
by_recompute = Counter(r["recompute"] for r in fits)
no_pp = [r for r in fits if r["pp"] == 1]
best_pp = min((r for r in fits if r["pp"] > 1), key=lambda r: r["step_s"])
none_fit = by_recompute["none"]
md(claim(none_fit <= 0.05 * len(fits) and by_recompute["selective"] > 0,
         ("不重算的布局一个也装不下" if none_fit == 0 else f"不重算能装下的布局只有 {none_fit} 种（共 {len(fits)} 种）")
         + f"：序列长 8192 时，注意力分数那一项让每层激活翻了好几倍。装得下的布局里 "
         f"{by_recompute['selective']} 种用选择性重算，{by_recompute['full']} 种要完全重算。",
         by_recompute=dict(by_recompute)))
md(claim(all(r["tp"] == 8 and r["recompute"] != "none" for r in no_pp) and best_pp["bubble"] > 0,
         f"不切流水线（pp=1）只有 tp=8 时才装得下（{len(no_pp)} 种，峰值最低 "
         f"{min(r['peak_bytes'] for r in no_pp) / 1e9:.1f} GB），而且靠的是 ZeRO-1 把优化器状态切到 8 个 DP 副本上。"
         f"它排在最前，是因为这里的单步时间只算了计算：没有 bubble，而 TP 的 all-reduce 一分钱没记。"
         f"切流水线的布局里最快的是 tp={best_pp['tp']}、pp={best_pp['pp']}、dp={best_pp['dp']} 的 {best_pp['schedule']}"
         f"（m={best_pp['m']}），bubble {best_pp['bubble']:.1%}，最忙的卡 {best_pp['peak_bytes'] / 1e9:.1f} GB。"
         "要在两者之间选，得把 TP 通信和 DP 梯度同步的时间也放进来，这正是上一节通信量表格的用处。",
         no_pp=len(no_pp), best_pp=best_pp))

# %% [markdown]
# ## 怎么讲清楚
#
# - **读 trace**：先看梯度对不对。空闲的位置（head / gaps / tail）说明不了原因：理想的 1F1B 里 rank 0 的 bubble 全在 gaps 里。用 trace 里量到的操作时长把同一个 plan 重放一遍、再用平均时长重放一遍（`course.attribution.attribute`），空闲就拆成调度本身的 bubble（增大 $m$、换调度）、不均衡（重新切层）和通信/开销（重叠通信、减少跨节点边界），三者相加正好是实测的空闲。
# - **量延迟**：用同一个 rank 时钟上的往返来量，不要跨进程相减时间戳。
# - **显存**：峰值在哪个 rank 取决于调度（1F1B 在 rank 0，GPipe、ZB-H1 各 rank 一样）；大词表的模型里最后一个 stage 的 logits 也常常先 OOM。
# - **找 hang**：先让它超时报错，再拿到每个 rank 停在哪一步、在等哪条消息，对着 plan 的依赖找环。阻塞的 send 是最常见的环；plan 自己排错的环，模拟器在启动进程前就能发现。
# - **对上 torch**：F→F，B→B（完整反向）或 I（输入梯度），W→W，stage 取路线上的位置。框架打印的调度表也要 validate（torch 打印的 `Schedule1F1B` 就有一个错位的显示 bug），最后以实测 trace 为准。
# - **3D 并行**：TP 通信最重、放节点内；PP 只传激活（开 TP 时每个 GPU 只传 $1/t$）、可以跨节点；DP 在最外层。$G = d\cdot m\cdot b$ 把三者连在一起：DP 越宽，$m$ 越小，bubble 越大。
#
# ## 练习
#
# - `trace-attribution`（★★★）：把一条 trace 每个 rank 的空闲分成调度的 bubble、不均衡和通信/开销（§2 的方法）。
# - `torch-actions`（★★☆）：课程的 plan 和 torch 的 action 字符串双向互译，F&B 重叠的一对也要对上。
# - `activation-bytes`（★★★）：从一层 transformer 的结构数出它为 backward 存的字节数（GPT 和 Llama 3 的一层，TP、SP、重算）。
# - `layout-chooser`（★★★）：给一个模型、一批 GPU 和 global batch，选出放得下又最快的 tp × pp × dp、调度、$m$ 和重算方式。
#
# ```bash
# python practice/judge.py start trace-attribution
# python practice/judge.py start torch-actions
# python practice/judge.py start activation-bytes
# python practice/judge.py start layout-chooser
# ```
