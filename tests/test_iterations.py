"""Several optimizer steps: a barrier between them (sync) or none (post-validation)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from course.costs import Costs
from course.iterations import repeat_plan, simulate_iterations
from course.plan import Op, ops_of
from course.schedules import build
from course.sim import simulate

UNIT = Costs(f=1, b=1, w=1)
SCHEDULES = [("gpipe", None), ("1f1b", None), ("interleaved", 2), ("zb-h1", None), ("zb-h2", None), ("zbv", None),
             ("dualpipe", None), ("dualpipev", None)]


@pytest.mark.parametrize("name, v", SCHEDULES)
def test_sync_repeats_one_iteration(name, v):
    plan = build(name, 4, 8, v=v)
    one = simulate(plan, UNIT)
    runs = simulate_iterations(plan, UNIT, 3, sync=True)
    assert runs.makespans == pytest.approx([one.makespan] * 3)
    assert runs.period == pytest.approx(one.makespan)
    assert runs.timeline.makespan == pytest.approx(3 * one.makespan)
    assert runs.timeline.busy == pytest.approx([3 * b for b in one.busy])
    assert runs.timeline.peak_activations == pytest.approx(one.peak_activations)


@pytest.mark.parametrize("name, v", SCHEDULES)
def test_no_sync_is_never_slower(name, v):
    plan = build(name, 4, 8, v=v)
    synced = simulate_iterations(plan, UNIT, 3, sync=True)
    free = simulate_iterations(plan, UNIT, 3, sync=False)
    assert free.period <= synced.period + 1e-9
    assert free.timeline.makespan <= synced.timeline.makespan + 1e-9
    assert free.makespans[0] == pytest.approx(synced.makespans[0])      # the first iteration is the same


@settings(max_examples=25, deadline=None)
@given(p=st.integers(1, 6), extra=st.integers(0, 8), t=st.sampled_from([0.5, 1.0, 2.0]))
def test_zb_h2_without_barrier_has_no_bubble(p, extra, t):
    """ZB-H2's steady period is m(F+B+W): the next warm-up fills the previous tail."""
    m = 2 * p - 1 + extra
    costs = Costs(f=t, b=t, w=t)
    plan = build("zb-h2", p, m)
    free = simulate_iterations(plan, costs, 3, sync=False)
    synced = simulate_iterations(plan, costs, 3, sync=True)
    assert free.period == pytest.approx(m * 3 * t)
    assert synced.period == pytest.approx(m * 3 * t + (p - 1) * t)
    assert max(free.timeline.peak_activations) <= 2 * p - 1


@pytest.mark.parametrize("p, m", [(2, 4), (4, 8), (4, 12)])
def test_1f1b_gains_nothing_without_barrier(p, m):
    """Rank 0 ends 1F1B last, so the next iteration cannot start any earlier: the period stays (m+p-1)(F+B)."""
    free = simulate_iterations(build("1f1b", p, m), UNIT, 3, sync=False)
    assert free.period == pytest.approx((m + p - 1) * 3)


def test_repeat_plan_concatenates_each_rank():
    plan = build("zbv", 2, 4)
    twice = repeat_plan(plan, 2).validate()
    assert twice.m == 8 and twice.placement == plan.placement
    for r in range(plan.p):
        first, second = twice.ranks[r][:len(plan.ranks[r])], twice.ranks[r][len(plan.ranks[r]):]
        assert first == plan.ranks[r]
        assert second == tuple(Op(op.kind, op.mb + 4, op.stage) for op in plan.ranks[r])
    dual = repeat_plan(build("dualpipe", 2, 4), 2).validate()
    assert dual.routes[4] == dual.routes[0] and dual.routes[6] == dual.routes[2]
    assert {op.mb for steps in dual.ranks for st in steps for op in ops_of(st)} == set(range(8))


def test_per_micro_batch_costs_repeat_each_iteration():
    costs = Costs(mb_scale=[1, 2, 1, 3])
    runs = simulate_iterations(build("1f1b", 2, 4), costs, 2, sync=False)
    assert sum(runs.timeline.busy) == pytest.approx(2 * sum(simulate(build("1f1b", 2, 4), costs).busy))


def test_one_iteration_and_bad_counts():
    runs = simulate_iterations(build("zb-h1", 4, 8), UNIT, 1, sync=False)
    assert runs.iterations == 1 and runs.period == runs.makespans[0] == 27
    assert runs.summary()["period"] == 27
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="iterations must be a positive integer"):
            simulate_iterations(build("1f1b", 2, 2), UNIT, bad)
