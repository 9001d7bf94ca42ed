"""A searched plan runs for real: `live --plan FILE` and torch's _PipelineScheduleRuntime, with gradient parity."""

from __future__ import annotations

import json

import pytest

from course.cli import main
from course.costs import Costs
from course.search import search

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def searched():
    # a tight cap, so the plan is not one of the hand-made schedules: 2 ranks, 3 micro-batches, <= 1.5 alive
    return search(2, 3, Costs(f=1, b=2, w=1, comm=0.5, w_mem=0.5), 1.5).plan


def test_live_runs_a_searched_plan_file_with_gradient_parity(searched, tmp_path, capsys):
    path = tmp_path / "searched.plan"
    path.write_text(searched.format() + "\n")
    assert main(["live", "--plan", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["grad_ok"] is True and got["max_abs_err"] <= got["tolerance"]
    assert [" ".join(op.split(".")[0] for op in ops) for ops in got["ranks"]] == searched.format().splitlines()


def test_searched_plan_runs_in_torchs_runtime_with_gradient_parity(searched, tmp_path):
    from course.live import run_plan
    from course.torch_bridge import read_csv, to_csv

    path = tmp_path / "searched.csv"
    path.write_text(to_csv(searched))
    assert read_csv(path, searched.m).format() == searched.format()
    result = run_plan(searched, engine="torch-runtime")      # torch's _PipelineScheduleRuntime loads that CSV
    assert result.grad_ok, result
    assert len(result.losses) == searched.m
