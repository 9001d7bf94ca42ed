"""Published results on pipeline schedules, reproduced with the course's simulator and held against ``course.search``.

Three tables, each a list of plain rows (dicts) with the published figure, ours, and the conditions:

- ``controllable_memory``: the V-Min / V-Half / V-ZB bubble and activation memory of "Pipeline Parallelism with
  Controllable Memory", next to the best one-stage-per-rank plan the search finds under the same memory.
- ``zero_bubble``: the bubble rates the Zero Bubble paper computes from its profiled F, B, W and communication
  times (1F1B, ZB-H1, ZB-H2 and its automatic scheduler at memory p and 2p), and the gain over 1F1B the search
  reaches at the memory of ZB-H1 (p) and ZB-H2 (2p-1), next to the gains the paper measured.
- ``zb1p_claim``: DeepSeek-V3's bubble for ZB1P at 1F1B's activation memory, against the optimum CP-SAT proves.

``markdown(rows, columns)`` renders any of them.  ``benchmarks/bench_papers.py`` prints the three and checks
what they reproduce; chapter 5 shows them.  Every published number below is quoted from the source named with it.

Two bubble rates appear.  The papers' (both Zero Bubble papers): 1 - m(F+B+W) / the longest rank, a rank's
length running from its first start to its last end ("longest_rank").  That is one iteration's cost when
iterations follow each other without a barrier (the optimizer step's post-validation).  The makespan's: 1 -
m(F+B+W) / (first start to last end over all ranks), the cost with a barrier between iterations, which is what
``course.search`` minimises and bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from .costs import Costs
from .schedules import build
from .search import EXACT_AVAILABLE, Problem, exact, heuristic
from .search.zb_auto import paper_choice, zb_auto_schedules
from .sim_compiled import CompiledPlan

CONTROLLABLE_MEMORY = ("Qi, Wan, Amar, Lin, \"Pipeline Parallelism with Controllable Memory\", NeurIPS 2024 "
                       "(arXiv:2405.15362); table as published in the README of sail-sg/zero-bubble-pipeline-"
                       "parallelism (commit 39f2c18: bubble rates) and in the paper's playground, "
                       "huggingface.co/spaces/sail/pipeline-parallelism-with-controllable-memory, description1.md "
                       "(activation memory in micro-batches)")
ZERO_BUBBLE = ("Qi, Wan, Huang, Lin, \"Zero Bubble Pipeline Parallelism\", ICLR 2024 (arXiv:2401.10241v1): Table 3 "
               "(model shapes), Table 4 (measured throughput), Table 5 (bubble rates), Table 9 (profiled times); the "
               "same settings are in the authors' megatron/core/pipeline_parallel/efficiency.py (branch arxiv of "
               "sail-sg/zero-bubble-pipeline-parallelism)")
DEEPSEEK_V3 = ("DeepSeek-AI, \"DeepSeek-V3 Technical Report\" (arXiv:2412.19437), Table 2, as in the README of "
               "deepseek-ai/DualPipe (commit 89f5de1); B there is the full backward")


# ---- the bubble rates ------------------------------------------------------------------------------------------

def longest_rank(tl) -> float:
    """The longest rank of a timeline, from its first start to its last end (the papers' cost of a schedule)."""
    return max(max(ends) - starts[0] for starts, ends in zip(tl.starts, tl.ends) if starts)


def bubble_rate(work: float, length: float) -> float:
    """1 - work / length: the share of ``length`` a rank holding ``work`` of computation idles."""
    return 1.0 - work / length


def markdown(rows: Sequence[dict], columns: Sequence[tuple[str, str, str]]) -> str:
    """A markdown table: ``columns`` are (header, key, format spec); a missing value prints as a dash."""
    def cell(row: dict, key: str, spec: str) -> str:
        value = row.get(key)
        return "-" if value is None else format(value, spec)
    lines = ["| " + " | ".join(h for h, _, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r, k, s) for _, k, s in columns) + " |" for r in rows]
    return "\n".join(lines)


# ---- (a) Pipeline Parallelism with Controllable Memory ----------------------------------------------------------

def controllable_memory_published(name: str, p: int, m: int) -> dict:
    """The published row for F = B = W: bubble rate in units of 1F1B's B = (p-1)/(m+p-1), activation memory in
    micro-batches (1F1B: p).  V-Min's bubble is published as 2B/3 "+ O(n) overhead", an overhead not given."""
    base = (p - 1) / (m + p - 1)
    return {"1f1b": {"bubble": base, "memory": p, "bubble_formula": "B = (p-1)/(m+p-1)", "memory_formula": "p"},
            "v-min": {"bubble": 2 * base / 3, "memory": (p + 4) // 3, "bubble_formula": "2B/3 + O(n)",
                      "memory_formula": "(p+4)//3"},
            "v-half": {"bubble": base / 2, "memory": (p + 2) // 2, "bubble_formula": "B/2",
                       "memory_formula": "(p+2)//2"},
            "v-zb": {"bubble": 0.0, "memory": p, "bubble_formula": "0", "memory_formula": "p"}}[name]


def controllable_memory(cases: Sequence[tuple[int, int]] = ((4, 8), (4, 16)), exact_time_limit: float | None = 10.0,
                        ) -> list[dict]:
    """The V schedules (F = B = W = 1, no communication, activations freed when W ends) as published and as
    simulated, each beside the best plan with one stage per rank under the same memory cap (its peak).

    Per row: ``bubble`` (ours, the papers' longest-rank rate) next to ``bubble_published``; ``memory`` (our peak,
    micro-batches of a full stage; a V chunk holds half) next to ``memory_published``; ``makespan_bubble`` (ours,
    with a barrier); and under the same cap the search's plan (``search_bubble``, makespan rate) with the rate no
    one-stage-per-rank plan can beat (``search_bound``).  With ``exact_time_limit`` the search is CP-SAT's (proven
    optimal when ``search_optimal``), without it the heuristic's and its cost bound."""
    costs = Costs(f=1, b=1, w=1)
    rows = []
    for p, m in cases:
        work = 3.0 * m
        for name in ("1f1b", "v-min", "v-half", "v-zb"):
            plan_costs = Costs(f=1, b=2, w=0) if name == "1f1b" else costs     # 1F1B runs B and W as one
            tl = CompiledPlan(build(name, p, m)).simulate(plan_costs)
            peak = max(tl.peak_activations)
            problem = Problem.make(p, m, costs, peak)
            res = exact(problem, exact_time_limit) if exact_time_limit else heuristic(problem)
            published = controllable_memory_published(name, p, m)
            rows.append({"schedule": name, "p": p, "m": m,
                         "bubble": bubble_rate(work, longest_rank(tl)), "bubble_published": published["bubble"],
                         "bubble_formula": published["bubble_formula"],
                         "memory": peak, "memory_published": published["memory"],
                         "memory_formula": published["memory_formula"],
                         "makespan_bubble": bubble_rate(work, tl.makespan),
                         "search_bubble": bubble_rate(work, res.makespan),
                         "search_bound": bubble_rate(work, res.lower_bound), "search_optimal": res.optimal,
                         "search_method": res.method})
    return rows


# ---- (b) Zero Bubble Pipeline Parallelism --------------------------------------------------------------------

class ZBSetting(NamedTuple):
    """One experiment of the Zero Bubble paper: profiled times (Table 9), model shape (Table 3), published bubble
    rates (Table 5) and measured throughput in samples per GPU per second (Table 4)."""

    model: str
    p: int
    m: int
    f: float
    b: float
    w: float
    comm: float
    hidden: int
    heads: int
    bubble: dict[str, float]          # 1f1b, zb-h1, zb-h2, zb-1p, zb-2p
    throughput: dict[str, float]      # 1f1b, zb-1p, zb-2p

    @property
    def w_mem(self) -> float:
        """The share of a micro-batch's activations W keeps: M_W / M_B = 32h / (34h + 5as), s = 1024 (Table 1)."""
        return 32 * self.hidden / (34 * self.hidden + 5 * self.heads * 1024)

    @property
    def costs(self) -> Costs:
        return Costs(f=self.f, b=self.b, w=self.w, comm=self.comm, w_mem=self.w_mem)


def _zb(model, p, m, f, b, w, comm, hidden, heads, h1f1b, hh1, hh2, z1, z2, t1f1b, t1, t2) -> ZBSetting:
    return ZBSetting(model, p, m, f, b, w, comm, hidden, heads,
                     {"1f1b": h1f1b, "zb-h1": hh1, "zb-h2": hh2, "zb-1p": z1, "zb-2p": z2},
                     {"1f1b": t1f1b, "zb-1p": t1, "zb-2p": t2})


ZB_SETTINGS = (     # model, p, m, F, B, W, comm | hidden, heads | Table 5 bubble rates | Table 4 throughput
    _zb("1.5B", 8, 24, 18.522, 18.086, 9.337, 0.601, 2304, 24, .2431, .1585, .1083, .1585, .0433, 11.8, 12.9, 14.5),
    _zb("1.5B", 8, 32, 18.513, 18.086, 9.331, 0.626, 2304, 24, .1985, .1242, .0837, .1242, .0039, 12.5, 13.4, 14.8),
    _zb("1.5B", 8, 64, 18.546, 18.097, 9.321, 0.762, 2304, 24, .1240, .0674, .0444, .0674, .0026, 13.6, 14.2, 14.9),
    _zb("6.2B", 8, 24, 29.718, 29.444, 19.927, 0.527, 4096, 32, .2347, .1323, .0698, .1323, .0029, 3.50, 3.88, 4.32),
    _zb("6.2B", 8, 32, 29.802, 29.428, 19.530, 0.577, 4096, 32, .1898, .1045, .0559, .1045, .0022, 3.70, 4.00, 4.35),
    _zb("6.2B", 8, 64, 29.935, 29.621, 19.388, 0.535, 4096, 32, .1091, .0554, .0294, .0554, .0010, 4.03, 4.20, 4.39),
    _zb("14.6B", 16, 48, 11.347, 11.248, 8.132, 0.377, 5120, 40, .2552, .1397, .0672, .1397, .0066, 1.40, 1.61, 1.81),
    _zb("14.6B", 16, 64, 11.307, 11.254, 8.101, 0.379, 5120, 40, .2082, .1088, .0516, .1088, .0054, 1.49, 1.67, 1.83),
    _zb("14.6B", 16, 128, 11.325, 11.308, 8.109, 0.378, 5120, 40, .1251, .0576, .0266, .0576, .0028, 1.64, 1.76,
        1.85),
    _zb("28.3B", 32, 96, 10.419, 10.207, 7.715, 0.408, 6144, 48, .2646, .1421, .0641, .1421, .0038, 0.76, 0.87, 0.99),
    _zb("28.3B", 32, 128, 10.408, 10.204, 7.703, 0.408, 6144, 48, .2168, .1106, .0490, .1106, .0029, 0.80, 0.90,
        1.00),
    _zb("28.3B", 32, 256, 10.402, 10.248, 7.698, 0.460, 6144, 48, .1352, .0594, .0257, .0594, .0018, 0.88, 0.96,
        1.00),
)


def zero_bubble(settings: Sequence[ZBSetting] = ZB_SETTINGS) -> list[dict]:
    """The Zero Bubble paper's bubble rates recomputed from its profiled times, and the search's gains over 1F1B.

    Per setting: ``bubble`` (ours, the paper's longest-rank rate) and ``bubble_published``, each a dict over 1f1b,
    zb-h1, zb-h2 (the hand-made schedules), zb-1p and zb-2p (the automatic scheduler's choice at a cap of p and
    2p micro-batches, ``course.search.zb_auto``), with each one's ``makespan``; ``gain_published`` (Table 4:
    ZB-1p's and ZB-2p's measured throughput over 1F1B's) and ``gain_from_bubbles`` ((1 - bubble) over 1F1B's
    (1 - bubble), published rates); the search at caps "p" and "2p-1" (ZB-H1's and ZB-H2's memory):
    ``search_makespan``, ``search_gain`` (1F1B's makespan over the search's, both with a barrier) and
    ``search_optimal`` (the makespan meets the proven lower bound)."""
    rows = []
    for s in settings:
        costs, p, m = s.costs, s.p, s.m
        work = m * (s.f + s.b + s.w)
        timelines = {"1f1b": CompiledPlan(build("1f1b", p, m)).simulate(Costs(f=s.f, b=s.b + s.w, w=0, comm=s.comm))}
        for name in ("zb-h1", "zb-h2"):
            timelines[name] = CompiledPlan(build(name, p, m)).simulate(costs)
        lengths = {name: (tl.makespan, longest_rank(tl)) for name, tl in timelines.items()}
        for name, cap in (("zb-1p", p), ("zb-2p", 2 * p)):
            chosen = paper_choice(zb_auto_schedules(Problem.make(p, m, costs, cap)))
            lengths[name] = (chosen.makespan, chosen.longest_rank)
        searched = {key: heuristic(Problem.make(p, m, costs, cap)) for key, cap in (("p", p), ("2p-1", 2 * p - 1))}
        base, tp, pub = lengths["1f1b"][0], s.throughput, s.bubble
        rows.append({"model": s.model, "p": p, "m": m,
                     "bubble": {k: bubble_rate(work, longest) for k, (_, longest) in lengths.items()},
                     "bubble_published": dict(pub), "makespan": {k: span for k, (span, _) in lengths.items()},
                     "gain_published": {k: tp[k] / tp["1f1b"] for k in ("zb-1p", "zb-2p")},
                     "gain_from_bubbles": {k: (1 - pub[k]) / (1 - pub["1f1b"]) for k in ("zb-1p", "zb-2p")},
                     "search_makespan": {k: r.makespan for k, r in searched.items()},
                     "search_gain": {k: base / r.makespan for k, r in searched.items()},
                     "search_optimal": {k: r.optimal for k, r in searched.items()}})
    return rows


# ---- (c) DeepSeek-V3's ZB1P row, against the proven optimum ------------------------------------------------------

ZB1P_COSTS = ((1, 1, 1), (18.522, 18.086, 9.337), (1, 2, 1), (2, 1, 1), (1, 1, 0.5), (1, 1, 2))   # (F, B, W)
ZB1P_W_MEM = (1.0, ZB_SETTINGS[0].w_mem, 0.0)


def zb1p_claim(p: int = 4, m: int = 8, cases: Sequence[tuple[float, float, float]] = ZB1P_COSTS,
               w_mems: Sequence[float] = ZB1P_W_MEM, time_limit: float = 30.0) -> list[dict]:
    """DeepSeek-V3's Table 2: ZB1P, at 1F1B's activation memory (PP micro-batches per rank), has a bubble of
    (PP-1)(F+B-2W), B the full backward, against 1F1B's (PP-1)(F+B).  Here B is the input gradient and W the
    weight gradient, so the claim reads (p-1)(F+B-W); the bubble is a rank's idle time, makespan - m(F+B+W)
    (every rank does the same work), without communication (the formula has none).

    CP-SAT finds the shortest plan with one stage per rank under a cap of p micro-batches, for each (F, B, W)
    and each share ``w_mem`` of the activations W keeps until it runs (1: all, as in the course's default; the
    Zero Bubble paper's 1.5B model: 0.37; 0: none).  ``verdict``: "optimal" (the claim is the proven optimum),
    "beaten" (a plan idles less), "contradicted" (no plan idles that little), "unproven" (no proof in time).
    Without OR-Tools (the browser edition) the heuristic's plan and its proven lower bound stand in for CP-SAT's."""
    rows = []
    for f, b, w in cases:
        claimed = (p - 1) * (f + (b + w) - 2 * w)
        for w_mem in w_mems:
            problem = Problem.make(p, m, Costs(f=f, b=b, w=w, w_mem=w_mem), p)
            res = exact(problem, time_limit) if EXACT_AVAILABLE else heuristic(problem)
            optimum = res.makespan - m * (f + b + w)
            bound = res.lower_bound - m * (f + b + w)
            if math.isclose(optimum, claimed, abs_tol=1e-6) and res.optimal:
                verdict = "optimal"
            elif optimum < claimed - 1e-6:
                verdict = "beaten"
            elif bound > claimed + 1e-6:
                verdict = "contradicted"
            else:
                verdict = "unproven"
            rows.append({"f": f, "b": b, "w": w, "w_mem": w_mem, "p": p, "m": m, "claimed": claimed,
                         "optimum": optimum, "bound": bound, "optimal": res.optimal, "verdict": verdict,
                         "one_f_one_b_claimed": (p - 1) * (f + b + w), "seconds": res.seconds})
    return rows
