"""Across machines: two torchrun agents on 127.0.0.1 stand in for two nodes (c10d rendezvous on a free port, an
explicit local address, bounded timeouts), as the README's two-machine command runs them.  Each test starts six
processes that import torch: kept to two on two shared cores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from course.ports import free_port

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[1]
TORCHRUN = Path(sys.executable).with_name("torchrun")


def start_agents(tmp_path: Path, *args: str) -> list[tuple[subprocess.Popen, Path, Path]]:
    """Two agents of one job, 2 workers each: (process, stdout file, stderr file) per agent.

    Agent 0 hosts the rendezvous store, as the endpoint's machine does across real machines.  On one machine both
    agents match the endpoint's host name and whichever binds first would host it: said explicitly (``is_host``)."""
    port = free_port()
    cmd = [str(TORCHRUN), "--nnodes", "2", "--nproc-per-node", "2", "--rdzv-backend", "c10d",
           "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "two-nodes", "--local-addr", "127.0.0.1",
           "--max-restarts", "0", "--monitor-interval", "0.5"]
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    agents = []
    for i in range(2):
        out, err = tmp_path / f"out-{i}.txt", tmp_path / f"err-{i}.txt"
        with open(out, "w") as o, open(err, "w") as e:
            conf = ["--rdzv-conf", f"join_timeout=120,read_timeout=60,is_host={int(i == 0)}"]
            agents.append((subprocess.Popen([*cmd, *conf, "-m", "course.live", *args], cwd=ROOT, env=env,
                                            stdout=o, stderr=e), out, err))
    return agents


def family(agents) -> list[psutil.Process]:
    procs = []
    for proc, _, _ in agents:
        try:
            parent = psutil.Process(proc.pid)
            procs += [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    return procs


@pytest.mark.timeout(400)
def test_two_agents_run_1f1b_and_zb_h1_with_gradient_parity_and_one_report(tmp_path):
    agents = start_agents(tmp_path, "1f1b", "zb-h1", "-m", "8", "--json")
    try:
        codes = [proc.wait(timeout=300) for proc, _, _ in agents]
    finally:
        for proc, _, _ in agents:
            proc.kill()
    errs = [err.read_text() for _, _, err in agents]
    assert codes == [0, 0], errs
    reports = [json.loads(line) for _, out, _ in agents for line in out.read_text().splitlines() if line.strip()]
    assert [r["schedule"] for r in reports] == ["1f1b", "zb-h1"]          # rank 0 alone, once per schedule
    assert all(r["grad_ok"] and r["max_abs_err"] < 1e-12 and r["p"] == 4 and r["m"] == 8 for r in reports), reports
    assert reports[0]["measured_peak_activation_bytes"] == reports[0]["simulated_peak_activation_bytes"]
    assert "".join(errs).count("course.live: running 1f1b") == 1


@pytest.mark.timeout(400)
def test_killing_one_agent_ends_the_other_with_a_clear_error_and_leaves_nothing(tmp_path):
    # 1F1B at 500 ms per unit: 16.5 s of emulated work, the launcher's watchdog would allow 5 s of stall
    agents = start_agents(tmp_path, "1f1b", "-m", "8", "--emulate", "--unit-ms", "500", "--timeout", "120")
    try:
        deadline = time.monotonic() + 300
        while not any("course.live: running" in err.read_text() for _, _, err in agents):
            assert time.monotonic() < deadline and all(p.poll() is None for p, _, _ in agents), \
                [err.read_text()[-2000:] for _, _, err in agents]
            time.sleep(0.2)
        time.sleep(2)                                  # under way on every rank
        everyone = family(agents)
        assert len(everyone) >= 6, everyone            # two agents, four workers
        killed, survivor = agents[1][0], agents[0]
        killed.send_signal(signal.SIGKILL)
        t0 = time.monotonic()
        code = survivor[0].wait(timeout=60)
        ended = time.monotonic() - t0
    finally:
        for proc, _, _ in agents:
            proc.kill()
    err = survivor[2].read_text()
    assert code != 0 and ended < 30, (code, ended, err[-3000:])
    lines = [line for line in err.splitlines() if line.startswith("error: rank")]
    assert lines and "another rank, its agent or its node ended or cannot be reached" in lines[0], err[-3000:]
    gone, alive = psutil.wait_procs(everyone, timeout=15)
    left = []
    for p in alive:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                left.append((p.pid, p.status(), " ".join(p.cmdline())[-120:]))
        except psutil.NoSuchProcess:
            pass
    assert not left, (left, err[-3000:])
