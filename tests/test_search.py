"""course.search: plans are valid and never above the cap, the exact method agrees with brute force, the
heuristic never beats a proven optimum, the hand-made ZB schedules never beat the search, CLI errors."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from course.cli import main
from course.costs import Costs
from course.plan import Op, Plan
from course.schedules import build
from course.search import VARIANTS, Problem, asap_makespan, exact, heuristic, list_schedule, lower_bound, search
from course.sim import simulate

EPS = 1e-9


def costs_for(p, data, allow_zero_w=True):
    vals = st.floats(0.1, 5) if not allow_zero_w else st.floats(0.0, 5)
    per_stage = st.lists(st.floats(0.1, 5), min_size=p, max_size=p)
    return Costs(f=data.draw(per_stage), b=data.draw(per_stage), w=data.draw(st.lists(vals, min_size=p, max_size=p)),
                 comm=data.draw(st.floats(0, 2)), w_mem=data.draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])))


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 5), m=st.integers(1, 8), data=st.data())
def test_heuristic_plans_are_valid_and_never_above_the_cap(p, m, data):
    costs = costs_for(p, data)
    cap = data.draw(st.one_of(st.floats(1, m + 1), st.lists(st.floats(1, m + 1), min_size=p, max_size=p)))
    res = search(p, m, costs, cap)
    plan = res.plan.validate()
    assert sum(op.kind == "W" for ops in plan.ranks for op in ops) == p * m     # every W, once
    assert plan.placement == tuple((r,) for r in range(p))
    tl = simulate(plan, res.problem.costs)
    assert tl.makespan == pytest.approx(res.makespan)
    assert tl.peak_activations == pytest.approx(res.peak_activations)
    caps = res.problem.cap
    for r in range(p):                                    # at every instant, not only at the peak
        assert all(level <= caps[r] + EPS for _, level in tl.memory[r])
    assert res.lower_bound <= res.makespan + EPS
    assert res.optimal == (res.makespan <= res.lower_bound + EPS)


@settings(max_examples=80, deadline=None)
@given(p=st.integers(1, 5), m=st.integers(1, 8), variant=st.sampled_from(VARIANTS), data=st.data())
def test_screening_uses_the_simulators_rule(p, m, variant, data):
    # the heuristic ranks candidates by list scheduling's own times and asap_makespan: both must be the simulator's
    problem = Problem.make(p, m, costs_for(p, data), data.draw(st.floats(1, m + 1)))
    orders, span = list_schedule(problem, variant)
    plan = Plan([[Op(*x) for x in o] for o in orders], m)
    tl = simulate(plan, problem.costs)
    simulated = tl.makespan
    assert span == pytest.approx(simulated)
    assert all(peak <= cap + EPS for peak, cap in zip(tl.peak_activations, problem.cap))   # every variant
    assert asap_makespan(problem, orders) == pytest.approx(simulated)
    zb = [list(s) for s in build("zb-h2", p, m).ranks]
    assert asap_makespan(problem, zb) == pytest.approx(simulate(build("zb-h2", p, m), problem.costs).makespan)


def interleavings(m: int, r: int):
    """Every order of one rank's ops with F before B before W for each micro-batch (any micro-batch order)."""
    ops = [(k, i) for i in range(m) for k in "FBW"]

    def rec(prefix, done):
        if len(prefix) == len(ops):
            yield list(prefix)
            return
        for i in range(m):
            n = done[i]
            if n < 3:
                done[i] += 1
                prefix.append(Op("FBW"[n], i, r))
                yield from rec(prefix, done)
                prefix.pop()
                done[i] -= 1
    yield from rec([], [0] * m)


def brute_force(problem: Problem) -> float:
    per_rank = [list(interleavings(problem.m, r)) for r in range(problem.p)]
    from course.search import peak_levels
    per_rank = [[o for o in orders if peak_levels(o, problem.w_mem) <= problem.cap[r] + EPS]
                for r, orders in enumerate(per_rank)]
    best = math.inf
    for combo in itertools.product(*per_rank):
        best = min(best, asap_makespan(problem, combo))
    return best


@pytest.mark.parametrize("p,m,costs,cap", [
    (2, 2, Costs(f=1, b=2, w=1, comm=0.5, w_mem=0.5), 1),
    (2, 2, Costs(f=[1, 2], b=[2, 1], w=[1.5, 0.5], comm=0, w_mem=1.0), 2),
    (2, 3, Costs(f=3, b=1, w=2, comm=1, w_mem=0.5), 1.5),
    (3, 2, Costs(f=[1, 1, 2], b=[1, 2, 2], w=[2, 1, 0.5], comm=0.25, w_mem=0.25), [2, 1, 1]),
])
def test_exact_agrees_with_brute_force_on_tiny_cases(p, m, costs, cap):
    problem = Problem.make(p, m, costs, cap)
    want = brute_force(problem)                  # every order, micro-batches in any order: checks the model
    res = exact(problem, time_limit=20, workers=1)
    assert res.optimal and res.makespan == pytest.approx(want)
    assert res.lower_bound == pytest.approx(want)
    assert lower_bound(problem) <= want + EPS
    assert heuristic(problem).makespan >= want - EPS


@pytest.mark.parametrize("seed", range(4))
def test_heuristic_never_beats_a_proven_optimum(seed):
    import random
    rnd = random.Random(seed)
    p, m = 3, 4
    costs = Costs(f=[rnd.choice([1, 2, 3]) for _ in range(p)], b=[rnd.choice([1, 2, 3]) for _ in range(p)],
                  w=[rnd.choice([0, 1, 2]) for _ in range(p)], comm=rnd.choice([0, 1]), w_mem=0.5)
    cap = rnd.choice([1, 2, 3])
    opt = search(p, m, costs, cap, exact_method=True, time_limit=30, workers=1)
    heur = search(p, m, costs, cap)
    assert opt.optimal
    assert heur.makespan >= opt.makespan - EPS
    assert opt.makespan <= heur.makespan + EPS           # the exact method starts from the heuristic
    assert heur.lower_bound <= opt.makespan + EPS


@settings(max_examples=15, deadline=None)
@given(p=st.integers(2, 6), data=st.data())
def test_hand_made_zero_bubble_schedules_never_beat_the_search_at_their_memory(p, data):
    m = data.draw(st.integers(p, 3 * p))
    costs = costs_for(p, data, allow_zero_w=False)
    for name, cap in (("zb-h1", p), ("zb-h2", 2 * p - 1)):
        tl = simulate(build(name, p, m), costs)
        assert max(tl.peak_activations) <= cap + EPS     # the same memory
        assert search(p, m, costs, cap).makespan <= tl.makespan + EPS


def test_exact_with_a_time_limit_reports_a_bound():
    problem = Problem.make(6, 12, Costs(f=5, b=6, w=4, comm=1, w_mem=0.5), 3)
    res = exact(problem, time_limit=2)
    assert res.lower_bound <= res.makespan + EPS
    assert res.lower_bound >= lower_bound(problem) - EPS
    assert res.optimal == (res.makespan <= res.lower_bound + EPS)
    assert max(res.peak_activations) <= 3 + EPS


def test_bad_problems_are_refused():
    with pytest.raises(ValueError, match="below one micro-batch"):
        Problem.make(2, 2, None, 0.5)
    with pytest.raises(ValueError, match="2 caps but p=3"):
        Problem.make(3, 2, None, [1, 2])
    with pytest.raises(ValueError, match="mb_scale"):
        Problem.make(2, 2, Costs(mb_scale=[1, 2]), 2)
    with pytest.raises(ValueError, match="finite"):
        Problem.make(2, 2, Costs(f=math.inf), 2)
    with pytest.raises(ValueError, match="too large for the exact method"):
        search(8, 16, None, 8, exact_method=True)


def test_cli_json_and_plan_file(tmp_path, capsys):
    out = tmp_path / "s.plan"
    assert main(["search", "-p", "4", "-m", "8", "--f", "5", "--b", "6", "--w", "4", "--comm", "1", "--w-mem",
                 "0.5", "--max-activations", "4", "--json", "--plan-out", str(out)]) == 0
    got = json.loads(capsys.readouterr().out)
    for key in ("makespan", "lower_bound", "optimal", "seconds", "peak_activations", "plan"):
        assert key in got
    assert len(got["plan"]) == 4 and max(got["peak_activations"]) <= 4
    plan = Plan.parse(out.read_text())
    assert plan.format().splitlines() == got["plan"]
    costs = Costs(f=5, b=6, w=4, comm=1, w_mem=0.5)
    assert simulate(plan, costs).makespan == got["makespan"]
    assert main(["search", "-p", "4", "-m", "8", "--f", "5", "--b", "6", "--w", "4", "--comm", "1", "--w-mem",
                 "0.5", "--max-activations", "4", "--exact", "--json"]) == 0
    exact_out = json.loads(capsys.readouterr().out)
    assert exact_out["optimal"] is True and exact_out["makespan"] <= got["makespan"]
    assert exact_out["lower_bound"] == exact_out["makespan"]


def test_help_says_what_is_proven_and_what_is_heuristic(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["search", "--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for phrase in ("lower bound always proven", "optimal true only when the plan's makespan meets that bound",
                   "Zero Bubble paper's automatic scheduler", "never longer than any of them",
                   "CP-SAT: the optimum, proven"):
        assert phrase in text, phrase


@pytest.mark.parametrize("argv,message", [
    (["-p", "4", "-m", "8", "--max-activations", "0.5"], "below one micro-batch"),
    (["-p", "8", "-m", "16", "--exact"], "too large for the exact method"),
    (["-p", "4", "-m", "8", "--f", "nan"], "finite"),
    (["-p", "4", "-m", "8", "--comm", "inf"], "finite"),
    (["-p", "4", "-m", "8", "--time-limit", "5"], "--exact only"),
    (["-p", "4", "-m", "8", "--exact", "--time-limit", "0"], "positive"),
    (["-p", "4", "-m", "8", "--f", "1,2"], "lists 2 values"),
    (["-p", "4", "-m", "8", "--w-mem", "2"], "[0, 1]"),
    (["-p", "0", "-m", "8"], "positive integer"),
    (["-p", "2", "-m", "3", "--f", "1e308"], "costs too large"),
    (["-p", "2", "-m", "3", "--comm", "1e300", "--exact"], "64-bit"),
])
def test_cli_errors_are_one_line(argv, message, capsys):
    assert main(["search", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:") and message in err


def test_exact_with_costs_it_must_round():
    """Costs finer than 1/1000 are rounded for CP-SAT; the result is still a real plan under the real costs."""
    res = search(2, 2, Costs(f=1e-4), exact_method=True)
    assert res.method == "exact" and res.makespan == pytest.approx(simulate(res.plan, res.problem.costs).makespan)
    with pytest.raises(ValueError, match="a number >= 1 or a list"):
        search(2, 4, None, True)
