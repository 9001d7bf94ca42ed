"""Recorded live runs: current, faithful to the live objects, replayed without torch, stale when their inputs change."""

from __future__ import annotations

import dataclasses
import json

import pytest
import stdlib_path

from course import recordings
from course.recordings import cases


def test_every_case_has_a_current_recording():
    """What ``make check`` runs: a recording made from other inputs or code is named (make recordings)."""
    assert recordings.stale() == [], "run: make recordings"


def test_changed_inputs_or_code_make_a_recording_stale(monkeypatch):
    case = cases.CASES["1f1b"]
    monkeypatch.setitem(cases.CASES, "1f1b", dataclasses.replace(case, inputs={**case.inputs, "m": 4}))
    assert recordings.stale(["1f1b"]) == ["1f1b"]
    monkeypatch.setitem(cases.CASES, "1f1b", dataclasses.replace(case, code=case.code + ("course.search",)))
    assert recordings.stale(["1f1b"]) == ["1f1b"]
    monkeypatch.setitem(cases.CASES, "1f1b", case)
    assert recordings.stale(["1f1b"]) == []


def test_a_recorded_live_result_comes_back_as_the_same_object():
    rec = recordings.load("1f1b-emulated")
    res = recordings.decode(rec["result"])
    again = recordings.decode(recordings.encode(res))
    for r in (res, again):
        assert type(r).__name__ == "LiveResult" and r.grad_ok and r.emulate and r.plan.m == 8
        assert r.simulated.makespan == 33.0 and r.simulated_makespan == pytest.approx(0.66)
        assert [len(s) for s in r.timeline.spans] == [16] * 4
    assert again.timeline.starts == res.timeline.starts and again.plan == res.plan and again.meta == res.meta
    assert repr(again) == repr(res) and again.report() == res.report()


def test_a_recorded_failure_is_raised_again():
    from course.live import DeadlockDetected, WorkerError

    rec = recordings.load("1f1b-blocking")
    err = recordings.decode(rec["result"])
    assert rec["raised"] and isinstance(err, DeadlockDetected)
    assert sorted(err.states) == [0, 1, 2, 3] and all("blocked in send" in s for s in err.states.values())
    assert str(err).splitlines()[1:] == [f"  rank {r}: {s}" for r, s in sorted(err.states.items())]
    worker = recordings.decode(recordings.load("worker-error")["result"])
    assert isinstance(worker, WorkerError) and worker.rank == 2 and worker.exc_type == "ZeroDivisionError"


REPLAY = """
from course import recordings
from course.live import DeadlockDetected
live = recordings.run("1f1b")
print("RESULT", live.grad_ok, live.plan.m, live.simulated.makespan, recordings.seconds("1f1b") > 0)
try:
    recordings.run("1f1b-blocking")
except DeadlockDetected as err:
    print("RAISED", sorted(err.states), err.elapsed > 0)
seconds = recordings.run("matmul-timing")
print("TIMING", sorted(seconds) == [2 ** k for k in range(9)])
"""


def test_without_torch_a_cell_gets_the_recording_and_says_so():
    run = stdlib_path.run(REPLAY)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "RESULT True 8 33.0 True" in out and "RAISED [0, 1, 2, 3] True" in out and "TIMING True" in out
    notes = [ln for ln in out.splitlines() if "recorded run" in ln]
    assert len(notes) == 3 and all("python -m course.recordings run " in ln for ln in notes)


def test_live_with_torch_runs_the_case_itself(monkeypatch):
    monkeypatch.delenv("COURSE_RECORDINGS", raising=False)
    assert recordings.live_available()
    refusal = recordings.run("torch-refuses-m-below-p")
    assert refusal == recordings.decode(recordings.load("torch-refuses-m-below-p")["result"])
    monkeypatch.setenv("COURSE_RECORDINGS", "1")
    assert not recordings.live_available()


def test_recordings_are_small_json():
    for name in cases.CASES:
        path = recordings.path_of(name)
        assert path.stat().st_size < 64_000, name
        assert json.loads(path.read_text(encoding="utf-8"))["command"] == f"python -m course.recordings run {name}"


def test_the_cli_checks_and_refuses_unknown_cases(capsys):
    from course.recordings.__main__ import main

    assert main(["check"]) == 0
    with pytest.raises(SystemExit):
        main(["run", "no-such-case"])
    with pytest.raises(recordings.RecordingError, match="no recording case"):
        recordings.load("no-such-case")
