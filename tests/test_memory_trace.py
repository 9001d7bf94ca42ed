"""course.trace: Chrome trace-event JSON, parsed back: one track per rank, one event per op, memory counters."""

import json

from course.memory import PRESETS, ActivationConfig, pipeline_memory
from course.schedules import build
from course.sim import simulate
from course.trace import chrome_trace, write_trace


def _parse(path):
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    return data, [e for e in events if e["ph"] == "X"], [e for e in events if e["ph"] == "C"], events


def test_one_complete_event_per_op_on_its_rank(tmp_path):
    plan = build("zb-h1", 4, 8)
    tl = simulate(plan)
    data, ops, counters, events = _parse(write_trace(tmp_path / "t.json", tl))
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {r: f"rank {r}" for r in range(4)}
    assert len(ops) == sum(len(steps) for steps in plan.ranks)
    for r in range(4):
        mine = [e for e in ops if e["pid"] == r]
        assert [e["name"] for e in mine] == [str(st) for st in plan.ranks[r]]
        for e, start, end in zip(mine, tl.starts[r], tl.ends[r]):
            assert e["ts"] == (start - tl.start) * 1000 and e["dur"] == (end - start) * 1000
            assert e["cat"] == e["args"]["kind"] and e["args"]["kind"] in "FBW"
            assert e["name"] == f"{e['args']['kind']}{e['args']['micro_batch']}.s{e['args']['stage']}"
    # the counter track replays each rank's activation levels; its peak is the timeline's peak
    for r in range(4):
        levels = [e["args"]["activations"] for e in counters if e["pid"] == r]
        assert max(levels) == tl.peak_activations[r] and levels[-1] == 0
    assert data["otherData"]["schedule"] == "zb-h1"


def test_overlapped_pairs_and_byte_counters():
    plan = build("dualpipev", 4, 8)
    pm = pipeline_memory(plan, PRESETS["llama3-8b"], ActivationConfig(4096, 1, 2, True, "selective"))
    trace = json.loads(json.dumps(chrome_trace(pm.timeline, pm.curves())))
    pairs = [e for e in trace["traceEvents"] if e["ph"] == "X" and "&" in e["name"]]
    assert pairs and all(e["args"]["kind"] == "F&B" and len(e["args"]["micro_batch"]) == 2 for e in pairs)
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert {e["name"] for e in counters} == {"memory (bytes)"}
    for r, rank in enumerate(pm.ranks):
        assert max(e["args"]["bytes"] for e in counters if e["pid"] == r) == rank.total


def test_sim_trace_flag_writes_a_loadable_trace(tmp_path, capsys):
    from course.cli import main

    path = tmp_path / "zbv.json"
    assert main(["sim", "zbv", "-p", "4", "-m", "8", "--json", "--trace", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)        # --json still prints exactly one object
    data, ops, counters, _ = _parse(path)
    assert len(ops) == 3 * 2 * 4 * 8                     # F, B, W per micro-batch per stage, 8 stages
    assert {e["pid"] for e in ops} == {e["pid"] for e in counters} == set(range(4))
    assert max(e["ts"] + e["dur"] for e in ops) == summary["makespan"] * 1000
    assert main(["sim", "1f1b", "-p", "2", "-m", "2", "--trace", str(tmp_path / "missing" / "t.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
