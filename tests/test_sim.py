"""The event-driven simulator: the seed chapter's figures, properties over random plans, deadlocks."""

import random
from functools import cache

import pytest
from hypothesis import assume, given, settings, strategies as st

from course import fast, sim_compiled
from course.costs import Costs
from course.plan import Op, Overlap, Plan, PlanError, ops_of
from course.schedules import REGISTRY, build
from course.sim import DeadlockError, simulate
from course.sim_compiled import CompiledPlan

TEXTBOOK = Costs(f=1, b=1, w=1)          # full backward = b + w = 2 = 2F, the seed chapter's setting


@pytest.mark.parametrize("name,peak", [("gpipe", [8, 8, 8, 8]), ("1f1b", [4, 3, 2, 1])])
def test_seed_chapter_figures(name, peak):
    tl = simulate(build(name, 4, 8), TEXTBOOK)
    assert tl.makespan == 33
    assert round(tl.bubble_ratio, 3) == 0.273
    assert tl.peak_activations == peak
    assert tl.busy == [24, 24, 24, 24]


@pytest.mark.parametrize("m,bubble", [(4, 0.429), (8, 0.273), (16, 0.158), (32, 0.086)])
def test_bubble_shrinks_with_m_as_the_formula_says(m, bubble):
    tl = simulate(build("1f1b", 4, m), TEXTBOOK)
    assert round(tl.bubble_ratio, 3) == bubble
    assert tl.bubble_ratio == pytest.approx(3 / (m + 3))


def test_equal_forward_and_backward():
    assert simulate(build("1f1b", 4, 8), Costs(f=1, b=0.5, w=0.5)).makespan == 22


def test_1f1b_order_and_idle_inside_each_window():
    plan = build("1f1b", 4, 8)
    assert " ".join(plan.rank_tokens(0)) == "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7"
    tl = simulate(plan, TEXTBOOK)
    assert tl.idle == [9, 6, 3, 0]        # (p-1)(F+B+W) on rank 0, the zero-bubble paper's quantity
    assert tl.ops(3)[:4] == ["F0.s3", "B0.s3", "F1.s3", "B1.s3"]


def test_latency_and_uneven_stage_costs():
    plan = build("1f1b", 2, 1)
    # one micro-batch through two stages: F0, comm, F1, B1, comm, B0
    tl = simulate(plan, Costs(f=[1, 3], b=[1, 1], w=[1, 1], comm=0.5))
    assert tl.makespan == pytest.approx(1 + 0.5 + 3 + 2 + 0.5 + 2)
    assert [sp.start for sp in tl.spans[1]] == [1.5, 4.5]


def test_per_microbatch_scale_and_memory_units():
    tl = simulate(build("gpipe", 2, 2), Costs(mb_scale=[1, 3], act=2))
    assert tl.busy == [(1 + 3) + (2 + 6)] * 2      # F = 1 and backward = 2, scaled by 1 and 3
    assert tl.peak_activations == [4, 4]  # two micro-batches of 2 units each


def test_overlapped_pair_costs_overlap_times_f_plus_b():
    plan = Plan([[Op("F", 0, 0), Overlap(Op("F", 1, 0), Op("B", 0, 0)), Op("B", 1, 0)]], 2)
    assert simulate(plan, Costs()).makespan == 1 + 3 + 2
    assert simulate(plan, Costs(overlap=0.5)).makespan == 1 + 1.5 + 2


def test_deadlock_names_what_each_rank_waits_for():
    # rank 0 waits for B0 from rank 1 before sending F1; rank 1 waits for F1 before doing B0
    plan = Plan.parse("F0 B0 F1 B1\nF0 F1 B0 B1")
    with pytest.raises(DeadlockError) as err:
        simulate(plan)
    msg = str(err.value)
    assert msg == ("deadlock after 2/8 steps: rank 0 waits at B0.s0 (step 1) for B0.s1 (rank 1's step 2); "
                   "rank 1 waits at F1.s1 (step 1) for F1.s0 (rank 0's step 2)")
    assert err.value.waits == {0: ("B0.s0", "B0.s1"), 1: ("F1.s1", "F1.s0")}


def test_a_pair_that_waits_on_itself_deadlocks():
    plan = Plan([[Op("F", 0, 0), Overlap(Op("F", 1, 0), Op("B", 1, 0)), Op("B", 0, 0)]], 2)
    with pytest.raises(DeadlockError, match=r"rank 0 waits at F1.s0&B1.s0 \(step 1\) for F1.s0"):
        simulate(plan)


@pytest.mark.parametrize("step,message", [
    ("F0", "rank 0 step 0: 'F0' is not an Op or an Overlap of two Ops"),
    (("F", 0, 0), "rank 0 step 0: ('F', 0, 0) is not an Op or an Overlap of two Ops"),
    (Op("F", "0", 0), "rank 0 step 0: F0.s0 names micro-batch '0', allowed 0..0"),
    (Overlap(Op("F", 0, 0), Op("F", 0, 0)), "duplicate op F0.s0: rank 0 runs it twice in step 0"),
])
def test_steps_that_are_not_ops_are_reported(step, message):
    with pytest.raises(PlanError) as err:
        simulate(Plan([[step, Op("B", 0, 0)]], 1))
    assert str(err.value) == message


def test_a_compiled_plan_simulates_under_many_costs_as_simulate_does():
    plan = build("dualpipe", 4, 8)
    compiled = CompiledPlan(plan)
    for costs in (Costs(), Costs(f=2, b=1, w=0.5, comm=0.3, overlap=0.7), Costs(mb_scale=[1, 3] * 4)):
        a, b = compiled.simulate(costs), simulate(plan, costs)
        assert (a.starts, a.ends, a.peak_activations) == (b.starts, b.ends, b.peak_activations)
    assert simulate(plan).ops(0) == compiled.simulate().ops(0)
    reversed_rank_0 = Plan([plan.ranks[0][::-1], *plan.ranks[1:]], plan.m, plan.placement, plan.routes)
    assert compiled.simulate().makespan == simulate(build("dualpipe", 4, 8)).makespan
    with pytest.raises(PlanError, match="comes before its own"):
        simulate(reversed_rank_0)
    with pytest.raises(PlanError, match="comes before its own"):
        CompiledPlan(reversed_rank_0)


def _odd_plans():
    """Plans whose ops hold odd values, or pairs in odd places: each simulator must give the same verdict."""
    import numpy as np
    F, B = (lambda mb, s: Op("F", mb, s)), (lambda mb, s: Op("B", mb, s))
    two = [[F(0, 0), F(1, 0), B(0, 0), B(1, 0)], [F(0, 1), B(0, 1), F(1, 1), B(1, 1)]]

    def edit(r, i, step, replaces=1):                  # ``step`` in place of rank r's steps i, i+1, ...
        ranks = [list(steps) for steps in two]
        ranks[r][i:i + replaces] = [step]
        return Plan(ranks, 2)
    yield edit(1, 2, Op("F", 1, 1.0))                  # a float stage equal to a held one
    yield edit(1, 2, Op("F", 1.0, 1))                  # a float micro-batch
    yield edit(1, 2, Op("F", True, 1))                 # a bool is an integer
    yield edit(1, 2, Op("F", np.int64(1), 1))          # so is a numpy integer
    yield edit(1, 2, Op("F", np.int64(1), np.int64(1)))
    yield edit(1, 2, Op("F", -1, 1))                   # negative, too large, not a number
    yield edit(1, 2, Op("F", 2, 1))
    yield edit(1, 2, Op("F", "1", 1))
    yield edit(1, 2, Op("F", None, 1))
    yield edit(1, 2, Op("R", 1, 1))                    # unknown kinds
    yield edit(1, 2, Op(["F"], 1, 1))
    yield edit(1, 2, Op("F", 1, 0))                    # a stage the rank does not hold
    yield edit(1, 2, Op("F", 1, 2))                    # a stage nobody holds
    yield edit(1, 2, Overlap(F(1, 1), B(1, 1)), 2)     # a pair holding an op and its own F: waits on itself
    yield edit(1, 2, Overlap(B(1, 1), F(1, 1)), 2)     # B before its own F inside a pair
    yield edit(1, 2, Overlap(F(1, 1), F(1, 1)))        # the same op twice in a pair
    yield edit(1, 2, Overlap(F(1, 1), "B1"))
    # one rank holding two stages, F0.s0 the input of F0.s1: in order, then in a pair with its own B, then both in
    # one pair
    yield Plan([[F(0, 0), F(0, 1), B(0, 1), B(0, 0)]], 1, placement=[[0, 1]])
    yield Plan([[F(0, 0), Overlap(F(0, 1), B(0, 1)), B(0, 0)]], 1, placement=[[0, 1]])
    yield Plan([[Overlap(F(0, 0), F(0, 1)), B(0, 1), B(0, 0)]], 1, placement=[[0, 1]])
    yield Plan([[F(0, 0), B(0, 0)], [F(1, 1), B(1, 1)]], 2, routes=[[0], [1]])  # two routes, one stage each
    yield Plan([[F(0, 0), B(0, 0), F(1, 0), B(1, 0)], [F(1, 1), B(1, 1)]], 2, routes=[[0], [1]])  # off route


@pytest.mark.parametrize("plan", list(_odd_plans()))
def test_odd_values_get_the_same_verdict_from_both_simulators(plan):
    assert outcome(compiled, plan, Costs(comm=0.5)) == outcome(simulate, plan, Costs(comm=0.5))


def test_malformed_plan_is_reported_as_malformed_not_as_deadlock():
    with pytest.raises(PlanError) as err:
        simulate(Plan.parse("F0 B0 B0\nF0 B0"))
    assert not isinstance(err.value, DeadlockError)
    assert "duplicate op B0.s0" in str(err.value)
    with pytest.raises(PlanError, match="missing op B1.s1"):
        simulate(Plan.parse("F0 F1 B0 B1\nF0 F1 B0"))


# ---- properties ---------------------------------------------------------------------------------
def reference_spans(plan: Plan, costs: Costs) -> list[list[tuple[float, float]]]:
    """The simulator's rule written as a longest path, step by step: a step starts when its rank's previous
    step has ended and each input has arrived (plus comm from another rank)."""
    durations, rank_of = costs.durations(plan), plan.rank_of_stage()
    step_of = {op: (r, i) for r, steps in enumerate(plan.ranks) for i, st in enumerate(steps) for op in ops_of(st)}

    @cache
    def span(r, i):
        step = plan.ranks[r][i]
        start = span(r, i - 1)[1] if i else 0.0
        for op in ops_of(step):
            for d in plan.dependencies(op):
                if step_of[d] != (r, i):       # the other op of the same pair: they run as one
                    start = max(start, span(*step_of[d])[1] + (costs.comm if rank_of[d.stage] != r else 0))
        return start, start + durations[r][i]
    return [[span(r, i) for i in range(len(steps))] for r, steps in enumerate(plan.ranks)]


@settings(max_examples=120, deadline=None)
@given(name=st.sampled_from(sorted(REGISTRY)), p=st.integers(1, 6), m=st.integers(1, 10), costs=st.builds(
    Costs, f=st.floats(0.1, 3), b=st.floats(0.1, 3), w=st.floats(0.0, 2), comm=st.floats(0, 1),
    overlap=st.floats(0.5, 1)), scaled=st.booleans(), data=st.data())
def test_every_schedule_matches_the_rule_written_as_a_longest_path(name, p, m, costs, scaled, data):
    try:
        plan = build(name, p, m)
    except ValueError:                          # e.g. DualPipe needs an even p
        assume(False)
    if scaled:
        costs = Costs(costs.f, costs.b, costs.w, costs.comm, mb_scale=data.draw(st.lists(
            st.floats(0.2, 3), min_size=m, max_size=m)), overlap=costs.overlap)
    tl = simulate(plan, costs)
    want = reference_spans(plan, costs)
    for r in range(p):
        assert tl.starts[r] == pytest.approx([s for s, _ in want[r]])
        assert tl.ends[r] == pytest.approx([e for _, e in want[r]])


def outcome(simulator, plan, costs):
    """What a simulator makes of a plan: its spans, peaks and memory curves, or its error (type, text, waits)."""
    try:
        tl = simulator(plan, costs)
    except PlanError as e:
        return type(e), str(e), getattr(e, "waits", None)
    return tl.starts, tl.ends, [list(s) for s in tl.steps], tl.peak_activations, tl.memory


def reorder_locally(steps, rng):
    """A random order of a rank's steps that keeps B after its F and W after its B (a valid plan that may
    deadlock): repeatedly take a random step whose own-stage inputs are already placed."""
    before = {"B": "F", "W": "B"}
    left, placed, out = list(steps), set(), []
    while left:
        ready = [st for st in left if all(op.kind == "F" or Op(before[op.kind], op.mb, op.stage) in placed
                                          for op in ops_of(st))]
        step = rng.choice(ready)
        left.remove(step)
        placed.update(ops_of(step))
        out.append(step)
    return out


def compiled(plan, costs):
    return CompiledPlan(plan).simulate(costs)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(REGISTRY)), p=st.integers(1, 6), m=st.integers(1, 12),
       comm=st.sampled_from([0.0, 0.25, 1.0]), overlap=st.floats(0.5, 1), w_mem=st.floats(0, 1),
       scaled=st.booleans(), per_stage=st.booleans(), order=st.sampled_from(["built", "reordered", "shuffled"]),
       data=st.data())
def test_plain_and_compiled_simulators_agree_exactly(name, p, m, comm, overlap, w_mem, scaled, per_stage,
                                                     order, data):
    """The central property: the compiled simulator is an optimisation of the plain one, nothing more.

    Same spans to the last bit, peaks, memory curves, and the same error (malformed plan, deadlock report) on
    every registered schedule, under random costs, and with some ranks' orders shuffled."""
    try:
        plan = build(name, p, m)
    except ValueError:                          # e.g. DualPipe needs an even p
        assume(False)
    cost = st.floats(0.0, 3.0)
    f, b, w = (data.draw(st.lists(cost, min_size=p, max_size=p) if per_stage else cost) for _ in "fbw")
    scale = data.draw(st.lists(st.floats(0.2, 3), min_size=m, max_size=m)) if scaled else None
    costs = Costs(f, b, w, comm=comm, act=data.draw(cost), mb_scale=scale, overlap=overlap, w_mem=w_mem)
    if order != "built":                        # some ranks in another order: deadlocks, malformed plans
        rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
        mix = reorder_locally if order == "reordered" else lambda steps, rng: rng.sample(steps, len(steps))
        ranks = [mix(steps, rng) if rng.random() < 0.5 else steps for steps in plan.ranks]
        plan = Plan(ranks, plan.m, plan.placement, plan.routes, plan.name)
    assert outcome(compiled, plan, costs) == outcome(simulate, plan, costs)


costs_strategy = st.builds(
    Costs,
    f=st.floats(0.1, 5), b=st.floats(0.1, 5), w=st.floats(0.0, 5), comm=st.floats(0, 2))


def critical_path(plan: Plan, costs: Costs) -> float:
    """Longest dependency chain (data dependencies and latencies only, no rank serialisation)."""
    table, rank_of = costs.stage_tables(plan), plan.rank_of_stage()
    memo = {}

    def finish(op):
        if op not in memo:
            ready = max((finish(d) + (costs.comm if rank_of[d.stage] != rank_of[op.stage] else 0)
                         for d in plan.dependencies(op)), default=0.0)
            memo[op] = ready + table[op.kind][op.stage] * costs.scale(op.mb)
        return memo[op]
    return max(finish(op) for op in plan.required_ops())


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["gpipe", "1f1b"]), p=st.integers(1, 6), m=st.integers(1, 12), costs=costs_strategy)
def test_makespan_bounded_below_by_busy_and_critical_path(name, p, m, costs):
    plan = build(name, p, m)
    tl = simulate(plan, costs)
    assert all(tl.makespan >= b - 1e-9 for b in tl.busy)
    assert tl.makespan >= critical_path(plan, costs) - 1e-9
    assert -1e-12 <= tl.bubble_ratio < 1
    assert all(i >= -1e-9 for i in tl.idle)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["gpipe", "1f1b"]), p=st.integers(1, 8), m=st.integers(1, 16),
       f=st.floats(0.1, 4), bw=st.floats(0.1, 4))
def test_uniform_gpipe_and_1f1b_take_m_plus_p_minus_1_slots(name, p, m, f, bw):
    tl = simulate(build(name, p, m), Costs(f=f, b=bw / 2, w=bw / 2))
    assert tl.makespan == pytest.approx((m + p - 1) * (f + bw))
    assert tl.bubble_ratio == pytest.approx((p - 1) / (m + p - 1))


@settings(max_examples=80, deadline=None)
@given(p=st.integers(1, 4), m=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_random_permutations_either_simulate_or_deadlock(p, m, seed):
    rng = random.Random(seed)
    plan = build("1f1b", p, m)
    plan = Plan([rng.sample(ops, len(ops)) for ops in plan.ranks], m)
    try:
        plan.validate()
    except PlanError as e:
        assert "comes before its own" in str(e)     # a shuffle can only break the local F -> B order
        with pytest.raises(PlanError):
            simulate(plan)
        return
    try:
        tl = simulate(plan)
    except DeadlockError as e:
        assert e.waits and all(r in range(p) for r in e.waits)
    else:
        assert sum(len(s) for s in tl.spans) == 2 * p * m


def test_simulator_and_cli_do_not_import_torch():
    import subprocess
    import sys
    code = ("import sys, course.sim, course.plots, course.cli; from course.cli import build_parser; build_parser(); "
            "sys.exit('torch' in sys.modules or 'matplotlib' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_w_mem_splits_the_release_between_b_and_w():
    """F allocates 1, B frees 1 - w_mem, W frees w_mem; without a split, B frees everything."""
    plan = Plan.parse("F0 B0 W0")
    expected = {0.0: [(0.0, 1.0), (2.0, 0.0)], 0.25: [(0.0, 1.0), (2.0, 0.25), (3.0, 0.0)],
                1.0: [(0.0, 1.0), (3.0, 0.0)]}
    for w_mem, memory in expected.items():
        assert simulate(plan, Costs(w_mem=w_mem)).memory[0] == memory
    assert simulate(Plan.parse("F0 B0"), Costs(w_mem=0.25)).memory[0] == [(0.0, 1.0), (3.0, 0.0)]
    assert simulate(build("1f1b", 4, 8), Costs(w_mem=0.3)).peak_activations == [4.0, 3.0, 2.0, 1.0]
    assert simulate(build("zb-h1", 4, 8), Costs()).peak_activations == [4.0, 4.0, 4.0, 4.0]
    assert simulate(build("zb-h1", 4, 8), Costs(w_mem=0.5)).peak_activations == [4.0, 3.5, 3.0, 2.5]
    with pytest.raises(ValueError, match="w_mem"):
        Costs(w_mem=1.5)


def test_costs_own_the_duration_of_a_step():
    """Full backward = b + w; a pair = overlap x (F + B); x the micro-batch's scale; every span lasts that long."""
    costs = Costs(f=2, b=1, w=0.5, overlap=0.5, mb_scale=[1, 3])
    assert costs.step_duration(Plan.parse("F0 B0"), Op("B", 1, 0)) == (1 + 0.5) * 3
    assert costs.step_duration(Plan.parse("F0 B0 W0"), Op("B", 1, 0)) == 1 * 3
    pair = Overlap(Op("F", 1, 0), Op("B", 0, 0))
    assert costs.step_duration(Plan.parse("F0 F1&B0 B1"), pair) == 0.5 * (2 * 3 + 1.5 * 1)
    for name in ("1f1b", "zb-h1", "dualpipe", "interleaved"):
        plan = build(name, 4, 8)
        costs = Costs(f=[1, 2, 3, 4], b=0.5, w=0.7, comm=0.2, overlap=0.7, mb_scale=[1, 2, 3, 1, 2, 3, 1, 2])
        tl, durations = simulate(plan, costs), costs.durations(plan)
        assert [len(d) for d in durations] == [len(steps) for steps in plan.ranks]
        for r in range(plan.p):
            assert [e - s for s, e in zip(tl.starts[r], tl.ends[r])] == pytest.approx(durations[r])
            assert durations[r] == [costs.step_duration(plan, st) for st in plan.ranks[r]]
        for each in (costs, Costs(), Costs(f=[1, 2, 3, 4]), Costs(f=2, b=[1, 1, 1, 3], mb_scale=[2] * 8)):
            assert fast.durations(each, plan, fast.plain_ranks(plan)) == each.durations(plan)   # the C lookups


def test_trace_lists_one_completion_event_per_step_in_time_order():
    plan = build("dualpipe", 4, 8)
    trace = []
    tl = simulate(plan, Costs(f=0.7, b=0.3, w=0.4, comm=0.1, overlap=0.8), trace=trace)
    assert len(trace) == sum(map(len, plan.ranks))
    assert [t for t, _, _ in trace] == sorted(t for t, _, _ in trace)
    assert sorted((r, str(step), t) for t, r, step in trace) == sorted(
        (sp.rank, str(sp.step), sp.end) for spans in tl.spans for sp in spans)


@pytest.mark.parametrize("field", ["f", "b", "w", "comm", "act", "overlap", "w_mem"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_costs_refuse_nan_and_infinities(field, bad):
    with pytest.raises(ValueError, match=field):
        Costs(**{field: bad})
    with pytest.raises(ValueError, match="mb_scale"):
        Costs(mb_scale=[1, bad])


@pytest.mark.parametrize("code", [
    "from course.sim import simulate; tl = simulate(build('dualpipe', 4, 8))",
    "from course.sim_compiled import CompiledPlan; tl = CompiledPlan(build('dualpipe', 4, 8)).simulate()",
    "from course.iterations import simulate_iterations; "
    "tl = simulate_iterations(build('zb-h2', 4, 8), iterations=3, sync=False).timeline",
])
def test_both_simulators_run_on_the_standard_library_alone(code):
    import subprocess
    import sys
    code = (f"import sys; from course.schedules import build; {code}; tl.summary(); tl.memory; "
            "sys.exit(any(m in sys.modules for m in ('numpy', 'torch', 'matplotlib')))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_the_cli_simulates_without_importing_numpy():
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "course", "sim", "1f1b", "-p", "4", "-m", "8",
                          "--json"], capture_output=True, text=True)
    assert run.returncode == 0 and '"makespan": 33' in run.stdout
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "course.sim_compiled" in imported and not {"numpy", "torch", "matplotlib"} & imported


BROWSER_LIKE = """
import warnings
import course.attribution, course.checks, course.claims, course.formulas, course.iterations, course.notebook_setup
import course.overlap, course.replay, course.schedules.dualpipe, course.sim_compiled, course.trace, course.widgets
from course import figure, plots
from course.costs import Costs
from course.memory import PRESETS, ActivationConfig, pipeline_memory
from course.ordering import order_effect, skewed_workloads
from course.partition import partition
from course.schedules import build
from course.search import search
from course.sim import simulate

pm = pipeline_memory(build("1f1b", 8, 64), PRESETS["gpt3-175b"], ActivationConfig(2048, 1, 8, True, "selective"))
part = partition([3, 1, 1, 1, 1, 1, 1, 4], 4)
gain = order_effect(skewed_workloads(3, 4, 1.0), 4)["gain"]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    res = search(4, 8, Costs(f=5, b=6, w=4, comm=1, w_mem=0.5), 4, exact_method=True, time_limit=5)
fig, ax = figure.subplots()
plots.memory(pm.timeline, ax=ax, curves=pm.curves())
print(round(pm.ranks[0].activations / 1e9, 2), part.bottleneck, len(gain), res.method, res.makespan,
      res.lower_bound, len(caught), "OR-Tools" in str(caught[0].message), figure.BACKEND, len(fig.svg()) > 0)
"""


def test_the_chapters_library_runs_without_numpy_matplotlib_torch_or_ortools():
    """What the browser edition calls: memory, partition, ordering, search (exact falls back), figures, widgets."""
    import stdlib_path
    run = stdlib_path.run(BROWSER_LIKE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["10.29", "4.0", "3", "heuristic", "153.0", "144.0", "1", "True", "svg", "True"]


def test_compiled_builds_a_schedule_once_and_simulates_like_the_plain_simulator():
    costs = Costs(f=1, b=2, w=0.5, overlap=0.7)
    assert sim_compiled.compiled("dualpipev", 4, 8) is sim_compiled.compiled("dualpipev", 4, 8)
    assert sim_compiled.compiled("dualpipev", 4, 8) is not sim_compiled.compiled("dualpipev", 4, 10)
    got, want = sim_compiled.compiled("dualpipev", 4, 8).simulate(costs), simulate(build("dualpipev", 4, 8), costs)
    assert (got.starts, got.ends, got.peak_activations) == (want.starts, want.ends, want.peak_activations)
    with pytest.raises(ValueError, match="unknown schedule"):
        sim_compiled.compiled("no-such-schedule", 4, 8)
