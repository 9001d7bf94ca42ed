"""The live runtime: launcher failures, gradient parity on every schedule, emulated timing, the deadlock watchdog,
the torch.distributed.pipelining bridge and the CLI.  Sized for two shared cores: p <= 4, a tiny model."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
import torch
import torch.distributed as dist

from course.costs import Costs
from course.live import (
    DeadlockDetected,
    JobTimeout,
    LiveOptions,
    WorkerError,
    WorkerStopped,
    course_engine,
    launch,
    run_plan,
    stray_workers,
)
from course.live.executor import select_device
from course.live.model import ModelConfig, max_grad_error, reference_grads
from course.lower import blocking_deadlock, lower
from course.plan import Plan, ops_of
from course.schedules import build
from course.sim import simulate

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[1]


# ---- launcher targets (top level: workers import them by name) ------------------------------------
def rank_sum(rank, world_size, scale):
    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    return (rank, world_size, scale * t.item())


def raise_on_rank_one(rank, world_size):
    if rank == 1:
        raise KeyError("boom from rank one")
    dist.barrier()
    return rank


def die_on_rank_zero(rank, world_size):
    if rank == 0:
        os._exit(7)
    dist.barrier()


def recv_from_each_other(rank, world_size):
    buf = torch.zeros(1)
    dist.recv(buf, 1 - rank)   # both wait to receive first: a classic deadlock


def sleep_long(rank, world_size):
    time.sleep(600)


def _no_workers_left():
    """Every process this test process started is gone, except the launcher's warm zygote (checked with psutil,
    independently of the launcher's own stray_workers())."""
    if stray_workers():
        return False
    for c in psutil.Process().children(recursive=True):
        try:
            cmd = " ".join(c.cmdline())
        except psutil.NoSuchProcess:
            continue
        except psutil.ZombieProcess:
            return False
        if "course.live.zygote" not in cmd:
            return False
    return True


# ---- launcher ----------------------------------------------------------------------------------
def test_launch_returns_each_ranks_value():
    assert launch(rank_sum, 3, args=(2.0,)) == [(0, 3, 6.0), (1, 3, 6.0), (2, 3, 6.0)]


@pytest.fixture
def jobdirs(tmp_path, monkeypatch):
    """Job directories go to an empty folder of their own: the test can see that none is left."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return lambda: sorted(p.name for p in tmp_path.glob("course-live-*"))


def test_worker_exception_comes_back_with_rank_and_traceback(jobdirs):
    with pytest.raises(WorkerError) as e:
        launch(raise_on_rank_one, 2, timeout=30)
    assert e.value.rank == 1 and e.value.exc_type == "KeyError"
    assert "boom from rank one" in str(e.value) and "raise_on_rank_one" in e.value.traceback
    assert _no_workers_left()
    assert jobdirs() == []


def test_worker_that_dies_is_reported():
    with pytest.raises(WorkerError) as e:
        launch(die_on_rank_zero, 2, timeout=30)
    assert e.value.rank == 0 and e.value.exc_type == "ProcessDied"
    assert _no_workers_left()


def test_generic_deadlock_detected_from_idle_cpu():
    t0 = time.monotonic()
    with pytest.raises(DeadlockDetected) as e:
        launch(recv_from_each_other, 2, timeout=60, stall=2.0)
    assert time.monotonic() - t0 < 30
    assert set(e.value.states) == {0, 1}
    assert all("recv" in s and "recv_from_each_other" in s for s in e.value.states.values()), e.value.states
    assert _no_workers_left()


def test_chapter_demos_ping_pong_and_a_rank_that_finished_early():
    """Chapter 8's targets: half round trips come back from rank 0 only; a last rank with one micro-batch fewer
    waits alone in the end-of-step barrier while the others are still inside minipipe's 1F1B loop."""
    from course.live import demos

    halves = launch(demos.ping_pong, 2, args=(20, 64), timeout=60)
    assert len(halves[0]) == 20 and halves[1] == [] and all(0 < x < 5 for x in halves[0])
    with pytest.raises(DeadlockDetected) as e:
        launch(demos.short_last_rank, 4, args=(4,), stall=2.0, timeout=60)
    stacks = e.value.stacks
    assert "in barrier" in stacks[3] and "minipipe.py" not in stacks[3], stacks[3]
    assert all('minipipe.py", line' in stacks[r] and "in worker" in stacks[r] for r in range(3)), stacks
    assert _no_workers_left()


def test_timeout_ends_the_job(jobdirs):
    with pytest.raises(JobTimeout) as e:
        launch(sleep_long, 2, timeout=3, stall=None)
    assert not isinstance(e.value, DeadlockDetected)
    assert "sleep" in e.value.states[0]
    assert _no_workers_left()
    assert jobdirs() == []


def test_launcher_replaces_a_dead_zygote():
    from course.live.launcher import _Zygote

    launch(rank_sum, 2, args=(1.0,))
    _Zygote.proc.kill()       # the warm forking process is gone (killed, crashed): the next job starts a new one
    _Zygote.proc.wait()
    assert launch(rank_sum, 2, args=(1.0,)) == [(0, 2, 1.0), (1, 2, 1.0)]
    assert _no_workers_left()


def test_bad_targets_and_arguments_are_refused():
    with pytest.raises(ValueError, match="importable module"):
        launch(lambda r, w: r, 2)
    with pytest.raises(ValueError, match="world_size"):
        launch(rank_sum, 0)
    with pytest.raises(ValueError, match="backend"):
        launch(rank_sum, 2, backend="mpi")
    with pytest.raises(ValueError, match="timeout must be a positive finite number"):
        launch(rank_sum, 2, timeout=float("nan"))


def test_a_worker_whose_parent_is_gone_exits():
    """The zygote that forked the workers is killed outright (no clean-up of its own): its workers follow it."""
    from course.live.launcher import _Zygote

    failure = []
    job = threading.Thread(target=lambda: failure.append(pytest.raises(WorkerError, launch, sleep_long, 2,
                                                                        timeout=120, stall=None)))
    job.start()
    deadline = time.monotonic() + 60
    while len(stray_workers()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = [psutil.Process(pid) for pid in stray_workers()]
    assert len(workers) == 2
    time.sleep(1)             # the launcher has read the zygote's answers and watches the job
    _Zygote.proc.kill()
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive, alive
    job.join(60)
    assert failure and failure[0].value.exc_type == "ProcessDied"
    assert _no_workers_left()


# ---- parity on every schedule ---------------------------------------------------------------------
PLANS = [("gpipe", 4, 4, {}), ("1f1b", 4, 8, {}), ("interleaved", 2, 4, {"v": 2}), ("zb-h1", 4, 8, {}),
         ("zb-h2", 4, 8, {}), ("zbv", 2, 4, {}), ("dualpipe", 2, 4, {}), ("dualpipev", 2, 4, {})]


@pytest.mark.parametrize("name,p,m,kw", PLANS, ids=[x[0] for x in PLANS])
def test_gradient_parity(name, p, m, kw):
    plan = build(name, p, m, **kw)
    res = run_plan(plan)
    assert res.grad_ok and res.max_abs_err < 1e-12, res
    for r in range(p):   # the measured order is the plan's order
        assert res.timeline.ops(r) == [str(s) for s in plan.ranks[r]]
    assert res.timeline.unit == "s" and res.measured_makespan > 0


def test_hand_written_split_plan_with_several_stages_per_rank():
    # Two ranks, four stages in a V (rank 0: stages 0 and 3), B/W split, W deferred to the end.
    text = """F0.s0 F1.s0 F0.s3 B0.s3 F1.s3 B1.s3 B0.s0 B1.s0 W0.s3 W1.s3 W0.s0 W1.s0
              F0.s1 F1.s1 F0.s2 F1.s2 B0.s2 B0.s1 B1.s2 B1.s1 W0.s2 W0.s1 W1.s2 W1.s1"""
    plan = Plan.parse(text, placement=[[0, 3], [1, 2]])
    res = run_plan(plan, blocks_per_stage=1, width=8)
    assert res.grad_ok, res


def test_gradient_check_detects_a_wrong_gradient():
    cfg = ModelConfig()
    ref = reference_grads(cfg, 2, 4)
    got = {k: [g.clone() for g in gs] for k, gs in enumerate(ref)}
    assert max_grad_error(got, ref) == 0.0
    got[1][0][0, 0] += 1e-6
    assert max_grad_error(got, ref) == pytest.approx(1e-6)
    with pytest.raises(ValueError, match="chunks"):
        max_grad_error({0: got[0]}, ref)


def test_micro_batch_loss_scaling_gives_the_batch_loss():
    res = run_plan(build("1f1b", 2, 4))
    cfg = ModelConfig()
    from course.live.model import Chunk, loss_fn, make_batch
    x, y = make_batch(cfg, 4)
    for k in range(2):
        x = Chunk(k, cfg)(x)
    assert sum(res.losses) / 4 == pytest.approx(loss_fn(x, y).item(), abs=1e-12)
    bubble = next(line for line in res.report().splitlines() if line.startswith("bubble ratio"))
    assert "real ops" in bubble and "--emulate" in bubble     # says which measure it is, and how to compare


# ---- emulated device time ---------------------------------------------------------------------------
def test_emulated_durations_are_the_simulators_in_seconds():
    plan, costs = build("zb-h1", 4, 8), Costs(f=1, b=1.5, w=0.5)
    sim = simulate(plan, costs)
    durations = course_engine.job(plan, LiveOptions(costs, emulate=True, unit_ms=10)).durations
    for r in range(4):
        assert durations[r] == pytest.approx([(sp.end - sp.start) / 100 for sp in sim.spans[r]])
    assert course_engine.job(plan, LiveOptions(costs)).durations is None


def test_emulated_1f1b_lands_near_the_simulator():
    # 40 ms per unit: the fixed cost of waking a process and passing a message stays small next to it even when
    # two cores are shared by many jobs.
    res = run_plan(build("1f1b", 4, 8), emulate=True, unit_ms=40)
    assert res.grad_ok
    assert res.simulated_makespan == pytest.approx(33 * 0.04)   # (m + p - 1) * (F + B) = 33 units of 40 ms
    assert 0.85 <= res.ratio <= 1.25, res
    assert res.timeline.peak_activations == [4, 3, 2, 1]


def test_emulated_latency_delays_the_consumer():
    costs = Costs(comm=1.0)   # one unit of latency per hop: 1F1B's round trips turn into idle time
    res = run_plan(build("1f1b", 2, 4), costs, emulate=True, unit_ms=40)
    assert res.simulated_makespan == pytest.approx(simulate(build("1f1b", 2, 4), costs).makespan * 0.04)
    assert 0.85 <= res.ratio <= 1.25, res
    assert "measured" in res.report() and "with emulated device time" in res.report()
    # rank 1's first forward cannot start before rank 0's F0 ends plus one unit of latency
    f0_rank0, f0_rank1 = res.timeline.spans[0][0], res.timeline.spans[1][0]
    assert f0_rank1.start - f0_rank0.end >= 0.04 * 0.95


# ---- blocking sends deadlock under 1F1B ---------------------------------------------------------------
def test_blocking_send_1f1b_deadlock_is_reported_and_cleaned_up():
    t0 = time.monotonic()
    with pytest.raises(DeadlockDetected) as e:
        run_plan(build("1f1b", 4, 8), blocking_send=True, timeout=80)
    assert time.monotonic() - t0 < 90
    states = e.value.states
    assert set(states) == {0, 1, 2, 3}
    assert all("blocked in send" in s for s in states.values()), states
    assert "B0.s3: blocked in send of the gradient for B0.s2 to rank 2" in states[3]
    assert "F1.s2: blocked in send of the activation for F1.s3 to rank 3" in states[2]
    # where each rank is stuck is what the lowering predicts without a process
    predicted = blocking_deadlock(lower(build("1f1b", 4, 8)))
    assert all(states[r].startswith(a.describe()) for r, a in predicted.items()), (states, predicted)
    assert _no_workers_left()


@pytest.mark.timeout(120)
def test_a_stopped_worker_is_named_as_stopped_within_the_stall():
    """SIGSTOP one rank while it pads an emulated op: the watchdog names it stopped (not "padding") once it has
    been stopped for the stall, instead of waiting for the job's timeout."""
    stopped = []

    def stop_one():
        deadline = time.monotonic() + 60
        while len(stray_workers()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(2)                        # both workers are past joining the group, inside the emulated steps
        pid = stray_workers()[0]
        os.kill(pid, signal.SIGSTOP)
        stopped.append((pid, time.monotonic()))

    thread = threading.Thread(target=stop_one)
    thread.start()
    # gpipe p=2 m=2 at 500 ms per unit: 4.5 s of emulated work; the stall is 5 of its longest steps, 5 s
    with pytest.raises(WorkerStopped) as e:
        run_plan(build("gpipe", 2, 2), emulate=True, unit_ms=500, timeout=100)
    thread.join()
    waited = time.monotonic() - stopped[0][1]
    assert waited < 5 + 10, waited           # the stall, plus the snapshot and polling
    named = [r for r, text in e.value.states.items() if text.startswith("stopped (SIGSTOP")]
    assert len(named) == 1 and f"rank {named[0]} stopped" in str(e.value), e.value
    assert "padding" not in e.value.states[named[0]].split(";")[0]
    assert _no_workers_left()


def test_blocking_send_gpipe_with_few_microbatches_still_runs():
    # GPipe never has two neighbours sending to each other at once, so blocking sends are harmless there.
    assert blocking_deadlock(lower(build("gpipe", 2, 2))) is None
    assert run_plan(build("gpipe", 2, 2), blocking_send=True).grad_ok


# ---- torch.distributed.pipelining ------------------------------------------------------------------------
TORCH = {"1f1b": "Schedule1F1B", "zb-h1": "ScheduleInterleavedZeroBubble", "interleaved": "ScheduleInterleaved1F1B",
         "zbv": "ScheduleZBVZeroBubble", "dualpipev": "ScheduleDualPipeV"}


@pytest.mark.parametrize("name,p,m,kw", [("1f1b", 4, 8, {}), ("zb-h1", 4, 8, {}), ("interleaved", 2, 4, {"v": 2}),
                                         ("zbv", 2, 4, {}), ("dualpipev", 2, 4, {})], ids=list(TORCH))
def test_torch_engine_parity(name, p, m, kw):
    res = run_plan(build(name, p, m, **kw), engine="torch")
    assert res.grad_ok, res
    assert res.meta["torch_schedule"] == TORCH[name]
    assert res.plan.split_backward == (name in ("zb-h1", "zbv", "dualpipev"))
    assert res.plan.validate() is res.plan   # the order torch ran is a valid plan, simulated as such
    if name == "1f1b":                       # torch's 1F1B runs exactly the textbook order
        assert res.plan.ranks == build("1f1b", p, m).ranks


def test_torch_engine_emulated_and_simulated_seconds():
    res = run_plan(build("1f1b", 2, 4), emulate=True, unit_ms=10, engine="torch")
    sim = res.simulated_seconds
    assert sim.unit == "s" and sim.makespan == pytest.approx(res.simulated_makespan) == pytest.approx(0.15)
    assert res.ratio >= 0.85, res   # padding makes every op at least its modelled length


def test_torch_engine_refuses_what_it_has_no_class_for():
    with pytest.raises(ValueError, match="zb-h2"):
        run_plan(build("zb-h2", 4, 8), engine="torch")
    with pytest.raises(ValueError, match="blocking"):
        run_plan(build("1f1b", 2, 2), engine="torch", blocking_send=True)
    # the engine reads the plan's placement: an interleaved plan named zbv is not torch's V placement
    posing = dataclasses.replace(build("interleaved", 2, 4, v=2), name="zbv")
    with pytest.raises(ValueError, match=r"places stages \[\[0, 2\], \[1, 3\]\].*ScheduleZBVZeroBubble places "
                                         r"\[\[0, 3\], \[1, 2\]\]"):
        run_plan(posing, engine="torch")
    with pytest.raises(ValueError, match="2 different routes"):
        run_plan(build("dualpipe", 2, 4), engine="torch-runtime")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name, p, m", [("zb-h1", 2, 4), ("interleaved", 2, 4), ("zbv", 2, 4), ("dualpipev", 2, 4),
                                        ("zb-h2", 4, 8)])
def test_exported_plans_run_in_torchs_runtime(name, p, m):
    # real PipelineStages on p gloo processes, torch's _PipelineScheduleRuntime executing our CSV
    plan = build(name, p, m, **({"v": 2} if name == "interleaved" else {}))
    res = run_plan(plan, engine="torch-runtime")
    assert res.grad_ok, res
    assert len(res.losses) == m
    assert res.meta["torch_schedule"] == "_PipelineScheduleRuntime"
    # torch's runtime ran the plan's order (an overlapped pair as its two ops, one after the other)
    ops = [[op for st in steps for op in ops_of(st)] for steps in plan.ranks]
    assert list(map(list, res.plan.ranks)) == ops


# ---- device and backend selection (the GPU path itself needs a GPU: benchmarks/gpu_check.sh) -----------
def test_device_selection(monkeypatch):
    assert select_device("cpu", 3) == torch.device("cpu")
    with pytest.raises(ValueError, match="nccl needs device cuda"):     # checked once, in LiveOptions
        LiveOptions(backend="nccl", device="cpu")
    with pytest.raises(ValueError, match="device must be"):
        LiveOptions(device="tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA device"):
        select_device("cuda", 0)
    with pytest.raises(ValueError, match="no CUDA device"):   # refused before any process starts
        run_plan(build("1f1b", 2, 2), backend="nccl", device="cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    chosen = []
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    assert select_device("cuda", 3) == torch.device("cuda", 1)
    assert chosen == [torch.device("cuda", 1)]
    with pytest.raises(ValueError, match="nccl needs device cuda"):
        run_plan(build("1f1b", 2, 2), backend="nccl")


# ---- CLI (torchrun runs on two agents in test_torchrun.py) ---------------------------------------------------
def test_cli_json(capsys):
    from course.cli import main

    assert main(["live", "1f1b", "-p", "2", "-m", "4", "--emulate", "--unit-ms", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["grad_ok"] is True and out["max_abs_err"] < 1e-12
    assert out["simulated_makespan"] == pytest.approx(15 * 0.01)
    assert out["measured_makespan"] > 0 and out["simulated_unit"] == "s"


def test_cli_errors_are_one_line(capsys):
    from course.cli import main

    assert main(["live", "1f1b", "-p", "2", "-m", "2", "--backend", "nccl"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nccl" in err
    # a unit so long that the emulated run cannot end before the timeout (1e308 ms overflows a sleep)
    for unit in ("1e308", "20000"):
        assert main(["live", "1f1b", "-p", "2", "-m", "2", "--emulate", "--unit-ms", unit]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "--timeout 60 s; lower --unit-ms" in err, err
    assert not stray_workers()
    assert main(["live", "1f1b", "-p", "4", "-m", "8", "--blocking-send", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["deadlock"] is True and set(out["states"]) == {"0", "1", "2", "3"}


# ---- options: checked once, before any process starts -----------------------------------------------------------
def test_live_options_are_checked_once():
    for bad, message in [(dict(unit_ms=float("nan")), "unit_ms"), (dict(timeout=float("inf")), "timeout"),
                         (dict(stall=0), "stall"), (dict(iterations=True), "iterations"),
                         (dict(iterations=0), "iterations"), (dict(engine="jax"), "engine must be one of"),
                         (dict(backend="mpi"), "backend must be one of"), (dict(width=0), "width")]:
        with pytest.raises(ValueError, match=message):
            LiveOptions.of(**bad)
    with pytest.raises(TypeError, match="unknown live option"):
        run_plan(build("1f1b", 2, 2), emulat=True)
    opts = LiveOptions.of(Costs(comm=0.5), emulate=True, unit_ms=40, width=8)
    assert opts.model == ModelConfig(width=8) and opts.latency_s == pytest.approx(0.02)
    assert LiveOptions(Costs(comm=0.5)).latency_s == 0.0        # no emulation, no latency


def test_size_guards_refuse_before_any_process_starts():
    cores = os.cpu_count()
    with pytest.raises(ValueError, match=rf"p={4 * cores + 1} live processes on {cores} cores.*--force"):
        run_plan(build("gpipe", 4 * cores + 1, 1))
    with pytest.raises(ValueError, match=r"GB of memory available; --force"):
        run_plan(build("1f1b", 2, 2), width=1_000_000)
    assert _no_workers_left()


def test_nan_gradients_do_not_pass_the_check():
    cfg = ModelConfig()
    ref = reference_grads(cfg, 1, 2)
    got = {0: [g.clone() for g in ref[0]]}
    got[0][0][0, 0] = float("nan")
    assert max_grad_error(got, ref) == float("inf")


# ---- every exit path of `python -m course live` cleans up -------------------------------------------------------
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sig,status,line", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated"),
                                             (signal.SIGKILL, -9, "")])
def test_cli_live_cleans_up_on_signals(tmp_path, sig, status, line):
    """A job under way is stopped by Ctrl-C, SIGTERM or SIGKILL: no job directory, no worker, no zygote is left."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "course", "live", "gpipe", "-p", "2", "-m", "2", "--emulate",
                             "--unit-ms", "5000", "--timeout", "200"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        parent, deadline = psutil.Process(proc.pid), time.monotonic() + 200
        while time.monotonic() < deadline:   # until both workers run (the zygote and its two children)
            family = parent.children(recursive=True)
            if len(family) >= 3 and list(tmp_path.glob("course-live-*/result-*")) == [] \
                    and len(list(tmp_path.glob("course-live-*/out-*"))) == 2:
                break
            time.sleep(0.2)
        assert len(family) >= 3, (family, proc.poll())
        time.sleep(1)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == status, err
        assert err.strip() == line and out == "", err
        gone, alive = psutil.wait_procs(family, timeout=15)
        assert not alive, alive
        assert list(tmp_path.glob("course-live-*")) == []
    finally:
        proc.kill()
