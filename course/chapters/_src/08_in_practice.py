# %% [markdown]
# # 第 8 章　实战：读 trace、找 hang、对上 torch、放进 3D 并行
#
# 前面几章的调度都在模拟器里排得整整齐齐。真实训练里拿到的是一条实测的 trace：哪里空了、为什么空、卡住时卡在哪，都要自己读出来。这一章在 4 个 gloo 进程上真跑 plan，把 trace 拆成 bubble、不均衡、通信和显存四类问题；再故意造一个 hang，看怎样找到它；然后把课程的 plan 对应到 `torch.distributed.pipelining` 的 action；最后看 PP 在 TP、DP 之间的位置。
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
# 1. 每个 rank 第一个操作之前和最后一个操作之后的空闲是灌满/排空，即 bubble；夹在两个操作中间的空闲是在等别人，常见原因是下游或上游的 stage 更慢（不均衡）或者数据在路上（通信）。
# 2. 不要直接拿两个进程的时间戳相减（时钟有偏差）。在同一个 rank 上量一次往返：从发出激活到收回梯度等了多久，减去下游处理这个 micro-batch 用的时间（也在下游自己的时钟上量），剩下的一半就是单程延迟（加上排队和计时误差）。
# 3. 每个 rank 此刻停在哪个操作、在等（或在发）哪条消息：看门狗或超时报告、各进程的 Python 栈（py-spy dump、faulthandler）。再拿它去对 plan 的依赖，找出互相等待的环。
# 4. plan 里有 W 时，`B` 是输入梯度，torch 写作 `I`（如 `2I3`，数字依次是 stage、micro-batch）；没有 W 时，`B` 是完整反向，torch 也写 `B`（如 `2B3`）。
# 5. TP 每层都要做 all-reduce，通信量最大、对带宽最敏感，只能放在 NVLink 连着的节点内；PP 每个 micro-batch 只在相邻 stage 间传一次激活，量小、可以跨节点；DP 每次迭代只做一次梯度 all-reduce，而且能和反向重叠，放在最外层。
#
# </details>

# %%
import re
import statistics

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from course import plots
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
# `run_plan` 在 $p$ 个 gloo 进程上执行同一个 plan：真实的前向、反向（autograd），异步发送，所有参数梯度和单进程的参考结果逐一比较。`emulate=True` 把每个操作补齐到 `Costs` 规定的时长（1 个 cost unit = `unit_ms` 毫秒），这样一台双核笔记本上测到的时间线，形状就和一个 GPU 集群上的一样，可以和模拟器逐格对照。

# %%
P, M, UNIT_MS = 4, 8, 20
plan = build("1f1b", P, M)
run = run_plan(plan, Costs(), emulate=True, unit_ms=UNIT_MS)
print(run)

fig, axes = plt.subplots(2, 1, figsize=(10, 4.2))
plots.gantt(run.timeline, ax=axes[0])
plots.gantt(run.simulated, ax=axes[1])
fig.tight_layout()
plt.show()
md(f"梯度检查：{'通过' if run.grad_ok else '**不通过**'}（最大绝对误差 {run.max_abs_err:.1e}）。"
   f"实测 makespan **{run.measured_makespan * 1e3:.0f} ms**，模拟器预测 {run.simulated_makespan * 1e3:.0f} ms，"
   f"实测 / 模拟 = {run.ratio:.2f}。多出来的部分是模拟器没有建模的东西：进程调度、消息收发、Python 本身的开销。")

# %% [markdown]
# ## 2. 把空闲分类
#
# 一个 rank 的空闲分三段：第一个操作开始之前（head）、操作与操作之间（gaps）、最后一个操作结束之后（tail）。head 和 tail 是灌满与排空，也就是 bubble 公式算的那部分；gaps 是在稳定段里等别人。下面这个函数就是读 trace 的第一步：

# %%
def idle_breakdown(tl):
    """Per rank: busy time, idle before its first op (head), between ops (gaps) and after its last op (tail)."""
    end = tl.start + tl.makespan
    rows = []
    for r, spans in enumerate(tl.spans):
        head = spans[0].start - tl.start
        tail = end - spans[-1].end
        rows.append({"rank": r, "busy": tl.busy[r], "head": head, "gaps": tl.idle[r], "tail": tail})
    return rows


def show_breakdown(tl, unit=1e3, suffix="ms"):
    lines = [f"| rank | busy ({suffix}) | head | gaps | tail |", "|---|---|---|---|---|"]
    for row in idle_breakdown(tl):
        lines.append(f"| {row['rank']} | {row['busy'] * unit:.0f} | {row['head'] * unit:.0f} | "
                     f"{row['gaps'] * unit:.0f} | {row['tail'] * unit:.0f} |")
    md("\n".join(lines))


show_breakdown(run.timeline)
rows = idle_breakdown(run.timeline)
edge = sum(r["head"] + r["tail"] for r in rows)
gaps = sum(r["gaps"] for r in rows)
sim_gaps = sum(r["gaps"] for r in idle_breakdown(run.simulated)) * UNIT_MS / 1e3
md(f"实测 bubble 占比 {run.timeline.bubble_ratio:.1%}，公式 $(p-1)/(m+p-1)$ 给出 {(P - 1) / (M + P - 1):.1%}。"
   f"所有 rank 合计，head+tail 空了 {edge * 1e3:.0f} ms，gaps 空了 {gaps * 1e3:.0f} ms。"
   f"模拟的同一调度 gaps 合计也有 {sim_gaps * 1e3:.0f} ms：1F1B 的前几个 stage 预热完要等第一个梯度回来；"
   "实测多出来的 gaps 是消息在路上的时间和各种开销。")

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
show_breakdown(uneven.timeline)
busy = uneven.timeline.busy
imbalance = max(busy) / statistics.mean(busy)
slowest = busy.index(max(busy))
others_gaps = [r["gaps"] for r in idle_breakdown(uneven.timeline) if r["rank"] != slowest]
balanced_gaps = sum(r["gaps"] for r in idle_breakdown(run.timeline) if r["rank"] != slowest)
md(f"梯度检查 {'通过' if uneven.grad_ok else '**不通过**'}。rank {slowest} 最忙：busy 是平均值的 **{imbalance:.2f}** 倍"
   f"（max / mean，均衡时接近 1）。其余 rank 的 gaps 合计 {sum(others_gaps) * 1e3:.0f} ms，"
   f"均衡运行里同样的量是 {balanced_gaps * 1e3:.0f} ms" +
   ("：空闲从两头跑到了中间，落在快的 stage 上，这就是不均衡在 trace 上的样子。" if sum(others_gaps) > balanced_gaps
    else "：这次测量没有拉开差距，可以重跑一次。") + "办法是重新切分层（第 7 章）。")

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
   (f"其中 {negative} 个样本是负的：本机进程之间的延迟比计时本身的抖动（sleep 多睡、进程被调度走）还小，"
    "这时只能说延迟在抖动以内。" if negative else "") +
   f"把中位数（{latency * 1e3 / UNIT_MS:.3f} 个 cost unit）放回模拟器，预测 makespan 从 "
   f"{run.simulated_makespan * 1e3:.0f} ms 变成 {what_if.makespan * UNIT_MS:.0f} ms，实测是 "
   f"{run.measured_makespan * 1e3:.0f} ms。" +
   ("剩下的差距来自每个操作自身的开销和进程调度，而不是传输。"
    if what_if.makespan * UNIT_MS < run.measured_makespan * 1e3 else "延迟已经解释了全部差距。") +
   "在 GPU 集群上跨节点的一跳是几十微秒到毫秒级、而且随激活大小增长，同样的读法能告诉你它是不是瓶颈；"
   "那时该做的是把发送和计算重叠起来，或者减少跨节点的 stage 边界。")

# %% [markdown]
# ## 5. 显存：谁存得最多
#
# 执行器按 plan 的顺序分配、释放激活：F 开始时多一份，这个 micro-batch 的反向做完时少一份。同一个模型换成 GPipe 再跑一次，对比两条实测曲线：

# %%
gpipe_run = run_plan(build("gpipe", P, M), Costs(), emulate=True, unit_ms=UNIT_MS)
fig, axes = plt.subplots(1, 2, figsize=(11, 3))
plots.memory(gpipe_run.timeline, ax=axes[0])
plots.memory(run.timeline, ax=axes[1])
fig.tight_layout()
plt.show()
md(f"GPipe 每个 rank 的峰值 {gpipe_run.timeline.peak_activations}，1F1B 是 {run.timeline.peak_activations}；"
   f"两次的 makespan 分别是 {gpipe_run.measured_makespan * 1e3:.0f} ms 和 {run.measured_makespan * 1e3:.0f} ms。"
   "在 GPU 上，真实的字节数用 `torch.cuda.max_memory_allocated()` 按 rank 量；峰值总是出现在第一个 stage 上，"
   "所以 OOM 通常先发生在 rank 0。")

# %% [markdown]
# ## 6. 一个 hang，以及怎样找到它
#
# 第 3 章讲过：1F1B 的发送必须是异步的。把它换成阻塞的 `send`，跑同一个 plan。启动器的看门狗发现所有没做完的 rank 都卡在通信里、好几秒没有进展，就结束整个作业，并报告每个 rank 卡在哪：

# %%
try:
    run_plan(plan, blocking_send=True, stall=2.0, timeout=60)
    hang = None
except DeadlockDetected as err:
    hang = err
    print(err)
assert hang is not None, "blocking sends were expected to deadlock 1F1B"

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
md(f"{len(states)} 个 rank 里有 **{len(sending)}** 个卡在 `send` 上，看门狗在 {hang.elapsed:.1f} s 时判定死锁。"
   + (f"读法：{reading}。阻塞的 send 要等对方调用 recv 才返回，两边都在发、都没在收，形成一个环；"
      "其余 rank 堵在发给下一个 rank 的 send 上，等的正是环里的人。" if cycles else
      "这次报告里没有两个 rank 互相发送的环，逐个看每个 rank 在等谁。"))

# %% [markdown]
# 找 hang 的一般步骤：
#
# 1. **让它报出来，而不是一直挂着**：设置超时（`init_process_group(timeout=...)`、NCCL 的 watchdog），或者像这里一样用看门狗。
# 2. **拿到每个 rank 的位置**：它在执行 plan 的第几步、在等（发）哪条消息；各进程的 Python 栈（`py-spy dump --pid`、`faulthandler.dump_traceback_later`）。上面的报告里也带了每个 rank 的栈：`hang.stacks[rank]`。
# 3. **对着 plan 找环**：谁在等谁。如果环是 plan 自己的（顺序排错了），在启动进程之前模拟器就能发现：`run_plan` 先模拟，一个会卡死的 plan 根本不会启动进程。

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
# | `F3&B1`（重叠的一对） | `(sF3;tB1)OVERLAP_F_B` |
#
# stage 编号取的是这个 stage 在 micro-batch 路线上的位置（交错调度里 rank 0 持有 stage 0 和 $p$，依此类推）。`course.torch_bridge.to_actions` 做这个转换：

# %%
for name in ("1f1b", "zb-h1"):
    print(name)
    for r, actions in enumerate(to_actions(build(name, 4, 4))):
        print(f"  rank {r}: {' '.join(actions)}")
runtime = load_in_torch(build("zb-h1", 4, 8))
md(f"`load_in_torch` 把 plan 写成 torch 的 CSV，交给 `{type(runtime).__name__}._load_csv`：torch 接受了它，"
   "并且自己补上了收发动作。练习 `torch-actions` 让你写出这个转换。")

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
md(f"{len(table)} 个调度类里，{same} 个和课程的调度逐个操作相同。" + (
    f"被拒绝的有 {', '.join(row['torch'] for row in rejected)}：它们打印出来的 `pipeline_order` 通不过 `validate()`。"
    if rejected else "没有被 `validate()` 拒绝的。"))

# %%
if any(row["torch"] == "Schedule1F1B" for row in rejected):
    order = torch_order("Schedule1F1B", P, M)
    last = " ".join(str(a) for a in order[P - 1])
    torch_run = run_plan(plan, engine="torch")
    md(f"拿 Schedule1F1B 看：torch 打印的最后一个 rank 是 `{last}`。"
       f"而让 torch 的运行时真正执行同一个调度、记下的顺序是 `{' '.join(torch_run.timeline.ops(P - 1))}`，"
       f"梯度检查{'通过' if torch_run.grad_ok else '**不通过**'}。"
       "打印出来的调度表和实际执行走的不是同一段代码；拿框架的调度表做对照之前，先让模拟器 validate 一遍，再看实测 trace。")

# %% [markdown]
# ## 8. PP 在 TP 和 DP 之间
#
# 大模型训练把 GPU 排成三维：$N = d \times p \times t$（数据并行 × 流水线 × 张量并行）。每一维的通信模式不同：
#
# - **TP**（张量并行）：每层把矩阵切开，每个 micro-batch 每层 4 次 all-reduce（前向 2 次、反向 2 次），每次 $b\,s\,h$ 个元素。量最大、每层都要等，所以放在节点内（NVLink）。
# - **PP**：每个 micro-batch 在 stage 边界传一次激活、回传一次梯度，各 $b\,s\,h$ 个元素。量小，能跨节点；代价是 bubble。
# - **DP**：每次迭代对本卡的参数梯度做一次 all-reduce，能和反向重叠，放在最外层。
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
        "PP": (2 * m * act / 1e9) if pp > 1 else 0.0,
        "DP": ring(dp) * params * BYTES / 1e9,
        "bubble": (pp - 1) / (m + pp - 1),
        "state_GB": params * STATE_BYTES / 1e9,
    }


rows = ["| t × p × d | m | TP GB | PP GB | DP GB | bubble | state GB/GPU |", "|---|---|---|---|---|---|---|"]
for tp, pp in ((8, 1), (8, 4), (4, 4), (1, 8)):
    x = layout(tp, pp, global_batch=256, micro=1)
    rows.append(f"| {tp} × {pp} × {x['dp']} | {x['m']} | {x['TP']:.1f} | {x['PP']:.2f} | {x['DP']:.1f} | "
                f"{x['bubble']:.1%} | {x['state_GB']:.1f} |")
md(f"{MODEL['layers']} 层、$h={MODEL['hidden']}$、序列长 {MODEL['seq']} 的模型，{WORLD} 张卡，"
   f"每个参数的训练状态 {STATE_BYTES} 字节。每张卡每次迭代发送的数据量（全局 batch 256 条序列，micro-batch 1 条）：\n\n"
   + "\n".join(rows))
base = layout(8, 4, 256, 1)
md(f"以 t=8、p=4 为例：TP 每张卡每次迭代要发 **{base['TP']:.0f} GB**，PP 只有 **{base['PP']:.1f} GB**，"
   f"DP 是 {base['DP']:.1f} GB。TP 的量是 PP 的 {base['TP'] / base['PP']:.0f} 倍，而且每层都卡在关键路径上，"
   f"只能走节点内的高速互联；PP 的少量点对点传输可以放心跨节点，代价是 {base['bubble']:.1%} 的 bubble。"
   f"不开 PP（t=8、p=1）时每张卡的训练状态是 {layout(8, 1, 256, 1)['state_GB']:.1f} GB，"
   f"是 t=8、p=4 的 {layout(8, 1, 256, 1)['state_GB'] / base['state_GB']:.0f} 倍：模型再大几倍，一个 TP 组就装不下了，"
   "这时才需要 PP 按深度再切一刀。")

# %% [markdown]
# 自己排一排：固定 64 张卡，选 TP 和 PP 的大小、全局 batch 和 micro-batch 大小，看每类通信量、bubble 和每张卡的训练状态怎么变。排不出来的组合（卡数或 batch 除不尽），图上会写原因。

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
# ## 怎么讲清楚
#
# - **读 trace**：先看梯度对不对，再把每个 rank 的空闲拆成 head / gaps / tail。head+tail 是 bubble（增大 $m$、换调度）；gaps 集中在快的 stage 上是不均衡（重新切层）；通信延迟用同一个 rank 时钟上的往返来量，不要跨进程相减时间戳（重叠通信、减少跨节点边界）；峰值激活看第一个 stage。
# - **找 hang**：先让它超时报错，再拿到每个 rank 停在哪一步、在等哪条消息，对着 plan 的依赖找环。阻塞的 send 是最常见的环；plan 自己排错的环，模拟器在启动进程前就能发现。
# - **对上 torch**：F→F，B→B（完整反向）或 I（输入梯度），W→W，stage 取路线上的位置。框架打印的调度表也要 validate，最后以实测 trace 为准。
# - **3D 并行**：TP 通信最重、放节点内；PP 只传激活、可以跨节点；DP 在最外层。$G = d\cdot m\cdot b$ 把三者连在一起：DP 越宽，$m$ 越小，bubble 越大。
#
# ## 练习
#
# - `torch-actions`：把课程的 plan 转成 torch 的 action 字符串（以及反过来）。
#
#   ```
#   python practice/judge.py start torch-actions
#   ```
