"""Micro-batch ordering: exhaustive optimum, Johnson's rule, the heaviest-first claim, the CLI."""

import itertools
import json
import random
import subprocess
import sys

import pytest

from course.cli import main
from course.costs import Costs
from course.ordering import (
    MAX_BEST_M,
    POLICIES,
    SCENARIOS,
    evaluate,
    heaviest_first_effect,
    order_microbatches,
    ordered_timeline,
    skewed_workloads,
)


def random_case(rng, p=None, schedule=None):
    m = rng.randint(1, 5)
    p = p or rng.choice([2, 3, 4])
    schedule = schedule or rng.choice(["1f1b", "gpipe", "forward"])
    scales = [round(rng.lognormvariate(0, 0.7), 3) for _ in range(m)]
    costs = Costs(f=[round(rng.uniform(0.5, 2), 2) for _ in range(p)], b=rng.choice([1, 2]), w=1)
    return scales, p, schedule, costs


def brute_force(scales, p, schedule, costs):
    return min(evaluate(o, scales, p, schedule, costs).makespan for o in itertools.permutations(range(len(scales))))


@pytest.mark.parametrize("seed", range(3))
def test_best_is_the_exhaustive_optimum_and_beats_every_policy(seed):
    rng = random.Random(seed)
    for _ in range(12):
        scales, p, schedule, costs = random_case(rng)
        best = order_microbatches(scales, p, "best", schedule, costs)
        assert sorted(best.order) == list(range(len(scales)))
        assert best.makespan == pytest.approx(brute_force(scales, p, schedule, costs), abs=1e-9)
        for policy in POLICIES:
            if policy == "johnson" and p != 2:
                continue
            assert best.makespan <= order_microbatches(scales, p, policy, schedule, costs).makespan + 1e-9


def test_johnson_is_optimal_for_two_stage_forward_flows():
    rng = random.Random(11)
    for _ in range(25):
        scales, p, schedule, costs = random_case(rng, p=2, schedule="forward")
        johnson = order_microbatches(scales, 2, "johnson", "forward", costs)
        assert johnson.makespan == pytest.approx(brute_force(scales, 2, "forward", costs), abs=1e-9)


def test_johnson_on_a_heavier_second_stage_puts_light_micro_batches_first():
    costs = Costs(f=[1, 2])
    assert order_microbatches([3, 5, 3, 4], 2, "johnson", "forward", costs).order == [0, 2, 3, 1]
    # heaviest-first is the worst idea here: 35 against 33 for fifo and the optimum
    got = {pol: order_microbatches([3, 5, 3, 4], 2, pol, "forward", costs).makespan
           for pol in ("fifo", "heaviest-first", "johnson", "best")}
    assert got == {"fifo": 33, "heaviest-first": 35, "johnson": 33, "best": 33}


def test_balanced_forward_flow_does_not_care_about_order():
    # equal stage costs: a proportional flow shop, makespan = sum + (p-1) * max for every order
    scales = [1, 4, 2, 7, 3]
    spans = {order_microbatches(scales, 4, pol, "forward").makespan for pol in POLICIES if pol != "johnson"}
    assert spans == {sum(scales) + 3 * max(scales)}


def test_heaviest_first_can_lose_to_fifo_in_1f1b():
    fifo = order_microbatches([2, 5, 4, 3, 2], 3, "fifo", "1f1b")
    heavy = order_microbatches([2, 5, 4, 3, 2], 3, "heaviest-first", "1f1b")
    assert heavy.order == [1, 2, 3, 0, 4]
    assert (fifo.makespan, heavy.makespan) == (67, 73)


def test_timeline_runs_the_ordered_micro_batches():
    scales, order = [1, 3, 2], [1, 2, 0]
    tl = ordered_timeline(order, scales, 2, "1f1b")
    assert [str(sp.step) for sp in tl.spans[0]][:2] == ["F1.s0", "F2.s0"]
    assert tl.spans[0][0].end == 3   # micro-batch 1 costs 3 x F
    assert tl.makespan == evaluate(order, scales, 2, "1f1b").makespan


def test_mean_completion():
    # forward flow, p=1: completions 1, 3, 6 in this order -> mean 10/3; lightest first is best for the mean
    r = order_microbatches([3, 1, 2], 1, "lightest-first", "forward")
    assert r.order == [1, 2, 0] and r.mean_completion == pytest.approx(10 / 3) and r.makespan == 6


@pytest.mark.parametrize("kwargs, msg", [
    (dict(scales=[1] * (MAX_BEST_M + 1), p=2, policy="best"), "at most 9"),
    (dict(scales=[1, 2], p=3, policy="johnson"), "exactly 2 ranks"),
    (dict(scales=[1, 2], p=2, policy="random"), "unknown policy"),
    (dict(scales=[1, 2], p=2, schedule="zigzag"), "unknown schedule"),
    (dict(scales=[], p=2), "costs is empty"),
    (dict(scales=[1, -1], p=2), "non-negative"),
])
def test_bad_input(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        order_microbatches(**kwargs)
    with pytest.raises(ValueError, match="permutation"):
        evaluate([0, 0], [1, 2], 2)


def test_cli_json(capsys):
    assert main(["order", "--costs", "3,5,3,4", "-p", "2", "--policy", "johnson", "--schedule", "forward",
                 "--f", "1,2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["order"] == [0, 2, 3, 1] and out["makespan"] == 33
    assert main(["order", "--costs", "2,5,4,3,2", "-p", "3", "--policy", "best", "--json"]) == 0
    best = json.loads(capsys.readouterr().out)
    assert best["makespan"] <= 67 and sorted(best["order"]) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("argv, msg", [
    (["order", "--costs", "1,2,3", "-p", "3", "--policy", "johnson"], "exactly 2 ranks"),
    (["order", "--costs", ",".join(["1"] * 10), "-p", "2", "--policy", "best"], "at most 9"),
    (["order", "--costs", "1,x", "-p", "2"], "comma-separated"),
    (["order", "--costs", "1,2", "-p", "2", "--schedule", "nope"], "invalid choice"),
])
def test_cli_bad_input_is_one_line_exit_2(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_python_m_course_order():
    proc = subprocess.run([sys.executable, "-m", "course", "order", "--costs", "3,5,3,4", "-p", "2",
                           "--policy", "best", "--schedule", "forward", "--f", "1,2", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["makespan"] == 33


def test_heaviest_first_study_helpers():
    work = skewed_workloads(6, 5, 1.0, seed=3)
    assert len(work) == 6 and all(len(w) == 5 and min(w) > 0 for w in work)
    assert work == skewed_workloads(6, 5, 1.0, seed=3) and work != skewed_workloads(6, 5, 1.0, seed=4)
    assert skewed_workloads(1, 4, 0.0)[0] == [1.0] * 4
    # balanced forward flow: order never matters for the makespan, but heavy-first hurts the mean completion
    flat = heaviest_first_effect(work, 4, "forward", optimum=True)
    assert flat["gain"] == pytest.approx([0.0] * 6, abs=1e-12) and flat["gap"] == pytest.approx([0.0] * 6, abs=1e-12)
    assert all(x > 0 for x in flat["mean_completion"])
    # 1F1B: gains match direct simulation, and heaviest-first is never better than the optimum
    eff = heaviest_first_effect(work[:3], 3, "1f1b", optimum=True)
    for scales, gain, gap in zip(work, eff["gain"], eff["gap"]):
        fifo = order_microbatches(scales, 3, "fifo").makespan
        heavy = order_microbatches(scales, 3, "heaviest-first").makespan
        assert gain == pytest.approx((fifo - heavy) / fifo) and gap >= -1e-12
    assert set(SCENARIOS) and all(s in ("forward", "1f1b") for s, _ in SCENARIOS.values())


def test_lightest_first_control_gains_like_heaviest_first_in_balanced_1f1b():
    """The control the blog's claim needs: in balanced 1F1B the gain comes from sorting, not from a light tail."""
    from course.ordering import order_effect

    scales = [0.6, 2.4, 1.0, 0.8, 3.0, 0.7]
    spans = {pol: order_microbatches(scales, 4, pol).makespan for pol in ("fifo", "heaviest-first", "lightest-first")}
    assert spans["lightest-first"] <= spans["heaviest-first"] < spans["fifo"]
    work = skewed_workloads(4, 5, 1.0, seed=5)
    light = order_effect(work, 3, "1f1b", policy="lightest-first", optimum=True)
    for scales_, gain, gap in zip(work, light["gain"], light["gap"]):
        fifo = order_microbatches(scales_, 3, "fifo").makespan
        ordered = order_microbatches(scales_, 3, "lightest-first").makespan
        assert gain == pytest.approx((fifo - ordered) / fifo) and gap >= -1e-12
    # lightest-first is shortest-processing-time first: it never lengthens the mean completion on a flat flow
    assert all(x <= 1e-12 for x in order_effect(work, 4, "forward", policy="lightest-first")["mean_completion"])
    assert order_effect(work, 3) == heaviest_first_effect(work, 3)
