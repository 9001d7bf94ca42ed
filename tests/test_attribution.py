"""course.replay and course.attribution: replaying a plan with given step durations, and splitting a trace's idle."""

from __future__ import annotations

import pytest

from course import formulas
from course.attribution import attribute, nominal_durations, rectangle_idle, window_idle
from course.costs import Costs
from course.plan import Plan
from course.replay import durations_of, replay, whole_backward
from course.schedules import REGISTRY, build
from course.sim import DeadlockError, simulate

COSTS = [Costs(), Costs(f=1, b=2, w=0.5, comm=0.3), Costs(f=[1, 2, 1, 3], b=1, w=1, overlap=0.7, comm=0.1)]


def same_times(a, b):
    return all(abs(x - y) < 1e-9 for ra, rb in zip(a.starts + a.ends, b.starts + b.ends) for x, y in zip(ra, rb))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_replay_with_the_simulated_durations_is_the_simulation(name):
    plan = build(name, 4, 8)
    for c in COSTS:
        tl = simulate(plan, c)
        assert same_times(replay(plan, durations_of(tl), c.comm), tl), (name, c)


def test_replay_refuses_bad_durations_and_reports_deadlocks():
    plan = build("1f1b", 2, 2)
    with pytest.raises(ValueError, match="one value per step"):
        replay(plan, [[1.0], [1.0]])
    with pytest.raises(ValueError, match="non-negative"):
        replay(plan, [[-1.0] * 4, [1.0] * 4])
    stuck = Plan.parse("F0 B0 F1 B1\nF1 B1 F0 B0")
    with pytest.raises(DeadlockError, match="deadlock"):
        replay(stuck, [[1.0] * 4] * 2)


def test_ideal_1f1b_rank0_bubble_sits_between_ops():
    """The reason window shapes mislead: rank 0 of ideal 1F1B has no head, no tail, all its idle in gaps."""
    tl = simulate(build("1f1b", 4, 8), Costs())
    rows = window_idle(tl)
    assert rows[0]["head"] == 0 and rows[0]["tail"] == 0 and rows[0]["gaps"] == 9
    assert [r["head"] + r["gaps"] + r["tail"] for r in rows] == rectangle_idle(tl)


def test_attribution_of_a_balanced_simulation_is_all_schedule():
    plan = build("1f1b", 4, 8)
    tl = simulate(plan, Costs())
    shares = attribute(plan, tl)
    assert all(abs(s.imbalance) < 1e-9 and abs(s.overhead) < 1e-9 for s in shares)
    assert [s.schedule for s in shares] == pytest.approx(rectangle_idle(tl))


def test_attribution_separates_imbalance_and_latency():
    plan = build("1f1b", 4, 8)
    heavy = [1, 1, 1, 2]
    c = Costs(f=heavy, b=heavy, w=heavy, comm=0.25)
    tl = simulate(plan, c)
    shares = attribute(plan, tl)
    for s in shares:
        assert s.schedule + s.imbalance + s.overhead == pytest.approx(s.idle)
    no_comm = simulate(plan, Costs(f=heavy, b=heavy, w=heavy))
    # latency is all the overhead: the trace minus the same durations without latency, on every rank
    assert [s.overhead for s in shares] == pytest.approx([tl.makespan - no_comm.makespan] * 4)
    assert sum(s.imbalance for s in shares) > 0
    assert shares[3].imbalance < 0 < shares[0].imbalance        # the heavy rank idles less, the others more
    nominal = nominal_durations(plan, durations_of(tl))
    assert sum(map(sum, nominal)) == pytest.approx(sum(tl.busy))   # the balanced run does the same work


def test_attribution_refuses_a_trace_of_another_order():
    with pytest.raises(ValueError, match="not the plan's order"):
        attribute(build("1f1b", 4, 8), simulate(build("gpipe", 4, 8)))


def test_whole_backward_changes_only_when_w_is_positive():
    plan = build("dualpipe", 8, 20)
    for rule in (False, True):
        zero_w = Costs(f=1, b=1, w=0)
        assert same_times(replay(plan, whole_backward(plan, zero_w, pairs_only=rule)), simulate(plan, zero_w))
    c = Costs(f=1, b=1, w=1)
    split, whole = simulate(plan, c), replay(plan, whole_backward(plan, c))
    assert sum(whole.busy) == pytest.approx(sum(split.busy))
    assert whole.makespan > split.makespan


@pytest.mark.parametrize("name", ["dualpipe", "dualpipev"])
@pytest.mark.parametrize("p", [4, 8])
@pytest.mark.parametrize("overlap", [1.0, 0.7])
def test_pair_whole_backward_gives_the_published_bubble_at_equal_costs(name, p, overlap):
    """DeepSeek's (PP/2-1)(F&B+B-3W) at F = B = W > 0: the F&B pair's backward as one block reproduces it."""
    c = Costs(f=1, b=1, w=1, overlap=overlap)
    plan = build(name, p, 3 * p if name == "dualpipe" and p % 4 == 0 else 4 * p)
    tl = replay(plan, whole_backward(plan, c, pairs_only=True))
    assert max(tl.makespan - b for b in tl.busy) == pytest.approx(formulas.published_bubble(name, p, c))
