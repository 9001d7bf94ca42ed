"""Partitioning layers into stages: the exact method against brute force, the blog's greedy, the CLI."""

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from course.cli import main
from course.partition import brute_force, partition, stage_costs

ROOT = Path(__file__).resolve().parents[1]


def random_case(rng):
    L = rng.randint(1, 9)
    p = rng.randint(1, L)
    layers = [rng.choice([0, 1, 1, 2, 3, 8]) * rng.random() for _ in range(L)]
    comm = rng.choice([0.0, rng.random(), [rng.random() for _ in range(L - 1)]])
    return layers, p, comm


@pytest.mark.parametrize("seed", range(4))
def test_dp_matches_brute_force(seed):
    rng = random.Random(seed)
    for _ in range(100):
        layers, p, comm = random_case(rng)
        part = partition(layers, p, comm=comm)
        assert part.bottleneck == pytest.approx(brute_force(layers, p, comm), abs=1e-9), (layers, p, comm)
        # a real partition: every layer once, in order, p non-empty stages, costs recomputed independently
        assert [i for s in part.stages for i in s] == list(range(len(layers)))
        assert len(part.stages) == p and all(part.stages)
        bounds = [s[0] for s in part.stages] + [len(layers)]
        assert part.stage_costs == pytest.approx(stage_costs(layers, bounds, comm))


def test_greedy_is_never_better_when_it_uses_every_stage():
    rng = random.Random(7)
    worse = 0
    for _ in range(300):
        layers, p, comm = random_case(rng)
        greedy, exact = partition(layers, p, "greedy", comm), partition(layers, p, comm=comm)
        if all(greedy.stages):
            assert greedy.bottleneck >= exact.bottleneck - 1e-9
            worse += greedy.bottleneck > exact.bottleneck + 1e-9
    assert worse > 0   # the comparison is not vacuous: the greedy does lose on some cases


def test_blog_greedy_examples():
    # a heavy lm_head at the end: greedy cuts too early and leaves the last real stage with 7
    layers = [3, 1, 1, 1, 1, 1, 1, 1, 1, 4]
    g, d = partition(layers, 4, "greedy"), partition(layers, 4)
    assert g.stages == [[0, 1], [2, 3, 4, 5], [6, 7, 8, 9], []] and g.bottleneck == 7
    assert d.stages == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9]] and d.bottleneck == 4
    # it can use fewer stages than ranks: the running sum never reaches total/p again in time
    assert partition([1, 1, 1, 1, 10], 2, "greedy").stages == [[0, 1, 2, 3, 4], []]
    assert partition([1, 1, 1, 1, 10], 2).bottleneck == 10


def test_the_greedy_exercise_gives_the_seeds_behaviour():
    """greedy-partition-bug hands the learner the seed's greedy as its own code (solutions/ and the starter); the
    grader checks the learner's cases with this module's greedy, so the two must agree."""
    spec = importlib.util.spec_from_file_location("seed", ROOT / "solutions" / "greedy-partition-bug.py")
    seed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seed)
    rng = random.Random(3)
    for _ in range(300):
        layers, p, _ = random_case(rng)
        assert seed.seed_partition(layers, p) == [s for s in partition(layers, p, "greedy").stages if s], (layers, p)


def test_comm_is_paid_by_both_sides_of_a_cut():
    part = partition([2, 2, 2, 2], 2, comm=0.5)
    assert part.stages == [[0, 1], [2, 3]] and part.stage_costs == [4.5, 4.5]
    # an expensive cut in the middle moves the cut elsewhere
    part = partition([2, 2, 2, 2], 2, comm=[0.0, 5.0, 0.0])
    assert part.bottleneck == 6 and part.stages[0] in ([0], [0, 1, 2])


@pytest.mark.parametrize("layers, p, comm, msg", [
    ([], 2, 0, "layers is empty"),
    ([1, 2], 3, 0, "p <= 2"),
    ([1, -2], 1, 0, "non-negative"),
    ([1, 2, 3], 0, 0, "positive integer"),
    ([1, 2, 3], 2, [1.0], "one per cut"),
])
def test_bad_input(layers, p, comm, msg):
    with pytest.raises(ValueError, match=msg):
        partition(layers, p, comm=comm)


def test_cli_json(capsys):
    assert main(["partition", "--layers", "3,1,1,1,1,1,1,1,1,4", "-p", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stages"] == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9]]
    assert out["stage_costs"] == [3, 4, 4, 4] and out["bottleneck"] == 4
    assert main(["partition", "--layers", "3,1,1,1,1,1,1,1,1,4", "-p", "4", "--method", "greedy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bottleneck"] == 7
    assert main(["partition", "--layers", "2,2,2,2", "-p", "2", "--comm", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stage_costs"] == [4.5, 4.5]


def test_cli_text(capsys):
    assert main(["partition", "--layers", "1,2,3", "-p", "2"]) == 0
    out = capsys.readouterr().out
    assert "stage 0: layers 0..1" in out and "bottleneck 3" in out


@pytest.mark.parametrize("argv, msg", [
    (["partition", "--layers", "1,2", "-p", "3"], "p <= 2"),
    (["partition", "--layers", "1,x", "-p", "1"], "comma-separated"),
    (["partition", "--layers", "1,2", "-p", "1", "--method", "magic"], "invalid choice"),
    (["partition", "-p", "2"], "--layers"),
])
def test_cli_bad_input_is_one_line_exit_2(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_python_m_course_partition():
    proc = subprocess.run([sys.executable, "-m", "course", "partition", "--layers", "1,2,3,4,5", "-p", "2", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["stages"] == [[0, 1, 2], [3, 4]]


@pytest.mark.parametrize("seed", range(40))
def test_pure_python_dp_equals_the_numpy_dp(seed):
    """The browser edition has no numpy: its plain-Python DP returns the same cuts and the same float costs."""
    from course.partition import _check, _dp_bounds, _dp_bounds_pure

    rng = random.Random(1000 + seed)
    L = rng.randint(1, 60)
    p = rng.randint(1, min(L, 9))
    # ties on purpose in half the cases: integer layers, equal cut costs
    layers = [rng.choice([1, 2, 3]) if seed % 2 else rng.uniform(0, 10) for _ in range(L)]
    comm = rng.choice([0.0, 0.5, [rng.uniform(0, 3) for _ in range(L - 1)]])
    layers, cuts = _check(layers, p, comm)
    assert _dp_bounds_pure(layers, p, cuts) == _dp_bounds(layers, p, cuts)
