"""The live 1F1B exercise's checks (course/live_checks.py) against honest and hostile train_step answers.

Each answer is a module in a temporary directory (workers import it by name), run on 4 real processes whose
messages go through the relay (course/live/relay.py).
"""

import copy
import sys
import textwrap
from pathlib import Path

import pytest

from course.checks import CheckFailed
from course.i18n import set_language
from course.live.relay import Record, Relay
from course.live_checks import (
    check_pipeline_step,
    judge_pipeline_record,
    one_f_one_b,
    record_pipeline_step,
)

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[1]

# The answer the review scored 20/20: gather every stage's weights, broadcast the batch, run the whole model on
# every rank, then replay the 1F1B hook order on dummy inputs.
ALL_GATHER = """\
import torch
import torch.distributed as dist


def train_step(stage, rank, world_size, num_microbatches, shape, inputs, targets, loss_fn):
    m = num_microbatches
    weights = []
    for p in stage.parameters():
        parts = [torch.empty_like(p) for _ in range(world_size)]
        dist.all_gather(parts, p.detach().contiguous())
        weights.append(parts)
    batch = torch.stack(inputs) if rank == 0 else torch.empty((m, *shape), dtype=torch.float64)
    target = torch.stack(targets) if rank == world_size - 1 else torch.empty((m, *shape), dtype=torch.float64)
    dist.broadcast(batch, 0)
    dist.broadcast(target, world_size - 1)
    W = [w.clone().requires_grad_() for w in weights[0]]
    b = [w.clone().requires_grad_() for w in weights[1]]
    x = batch
    for r in range(world_size):
        x = torch.tanh(x @ W[r].T + b[r])
    loss = sum(loss_fn(x[i], target[i]) for i in range(m)) / m
    loss.backward()
    for p, g in zip(stage.parameters(), (W[rank].grad, b[rank].grad)):
        p.grad = g.clone()
    warm = min(world_size - rank - 1, m)
    order = ["F"] * warm + ["F", "B"] * (m - warm) + ["B"] * warm
    pending = []
    for step in order:   # the hook order the old check looked for, on inputs nobody sent
        if step == "F":
            pending.append(stage(torch.zeros(shape, dtype=torch.float64, requires_grad=True)))
        else:
            pending.pop(0).backward(torch.zeros(shape, dtype=torch.float64))
    return loss.item() if rank == world_size - 1 else None
"""

# The same shortcut without collectives: every rank sends its weights to every other rank point to point.
P2P_WEIGHTS = ALL_GATHER.replace("""        dist.all_gather(parts, p.detach().contiguous())
""", """        for peer in range(world_size):
            if peer != rank:
                handle = dist.isend(p.detach().contiguous(), dst=peer)
                dist.recv(parts[peer], src=peer)
                handle.wait()
        parts[rank] = p.detach().clone()
""").replace("""    dist.broadcast(batch, 0)
    dist.broadcast(target, world_size - 1)
""", "")

# Honest, in its own style: every activation receive posted up front (irecv), waited for just before its forward.
PREFETCH = (ROOT / "solutions" / "live-1f1b.py").read_text().replace(
    """        else:
            x = torch.empty(shape, dtype=torch.float64)
            dist.recv(x, src=rank - 1)
            x.requires_grad_()""",
    """        else:
            x, handle = posted[i]
            handle.wait()
            x.requires_grad_()""").replace(
    "    warm = min(world_size - rank - 1, m)\n",
    "    posted = [] if first else [(b, dist.irecv(b, src=rank - 1)) for b in\n"
    "                               [torch.empty(shape, dtype=torch.float64) for _ in range(m)]]\n"
    "    warm = min(world_size - rank - 1, m)\n")


@pytest.fixture(autouse=True)
def chinese():
    """The messages these tests read are the Chinese ones (the English: tests/test_i18n_judge.py)."""
    set_language("zh")
    yield
    set_language(None)


@pytest.fixture
def answer(tmp_path, monkeypatch):
    """answer(source) -> its train_step, from a module the gloo workers can import."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def load(source):
        name = f"answer_{len(made)}_{tmp_path.name.replace('-', '_')}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        made.append(name)
        return __import__(name).train_step

    yield load
    for name in made:
        sys.modules.pop(name, None)


def test_the_reference_solution_passes(answer):
    check_pipeline_step(answer((ROOT / "solutions" / "live-1f1b.py").read_text()), world_size=4, m=5, seed=7)


def test_receives_posted_early_still_pass(answer):
    assert "posted[i]" in PREFETCH
    check_pipeline_step(answer(PREFETCH), world_size=4, m=3, seed=8)


def test_the_starter_fails_with_its_exception(answer):
    # as NotImplementedError itself (the judge's "not implemented yet" line), naming the rank, not a traceback
    with pytest.raises(NotImplementedError, match=r"train_step \(rank \d\)"):
        check_pipeline_step(answer((ROOT / "practice" / "problems" / "live-1f1b" / "starter.py").read_text()),
                            world_size=4, m=4, seed=1)


def test_gathering_the_weights_and_running_the_whole_model_everywhere_fails(answer):
    train_step = answer(ALL_GATHER)
    with pytest.raises(CheckFailed, match=r"集合通信 \(collective\) allgather"):
        check_pipeline_step(train_step, world_size=4, m=4, seed=2)


def test_sending_the_weights_point_to_point_fails(answer):
    with pytest.raises(CheckFailed, match=r"只和相邻的 rank|形状 \(shape\)"):
        check_pipeline_step(answer(P2P_WEIGHTS), world_size=4, m=4, seed=3)


def run_recorded(train_step, world_size, m, seed):
    """The ranks' records and the relay's, of one job."""
    with Relay(world_size) as relay:
        records = record_pipeline_step(train_step, world_size, m, seed, 30.0, relay.address)
    return records, relay.record


def test_the_records_and_what_forging_them_gives(answer):
    records, relayed = run_recorded(answer((ROOT / "solutions" / "live-1f1b.py").read_text()), 3, 3, seed=4)
    plain = (list, dict, str, float, int, type(None))

    def walk(x):
        assert type(x) in plain, type(x)
        for v in (x.values() if type(x) is dict else x if type(x) is list else ()):
            walk(v)
    walk(records)
    judge_pipeline_record(records, relayed, 3, 3, seed=4)
    assert [e[:2] for e in records[1]["events"]] == one_f_one_b(3, 1, 3)
    assert len(relayed.messages) == 2 * 3 * 2 and len(set(relayed.pids.values())) == 3   # three processes
    # the ranks' records alone, with nothing through the relay: what a record forged in one process gives
    with pytest.raises(CheckFailed, match="only these of 3 ranks joined"):
        judge_pipeline_record(records, Record(), 3, 3, seed=4)
    # a message that is not what the stage computed
    changed = copy.deepcopy(relayed)
    changed.messages[0].data = bytes(len(changed.messages[0].data))
    with pytest.raises(CheckFailed, match="max abs error"):
        judge_pipeline_record(records, changed, 3, 3, seed=4)
    # a message posted before what 1F1B has its rank receive first (the relay's clock says so)
    early = copy.deepcopy(relayed)
    sent_back = [x for x in early.messages if (x.src, x.dst) == (2, 1)]
    sent_back[1].posted = sent_back[0].posted - 1   # rank 2's B1 gradient, before it received F1's activation
    with pytest.raises(CheckFailed, match="not in 1F1B order"):
        judge_pipeline_record(records, early, 3, 3, seed=4)
    # stage inputs that are not what was received: rank 1 computed on something else
    records[1]["forwards"][2]["input"] = records[1]["forwards"][1]["input"]
    with pytest.raises(CheckFailed, match="stage input"):
        judge_pipeline_record(records, relayed, 3, 3, seed=4)
    with pytest.raises(CheckFailed, match="malformed"):
        judge_pipeline_record([{"events": 1}] * 3, relayed, 3, 3, seed=4)
    with pytest.raises(CheckFailed, match="seed=5"):   # judged against another seed: other inputs
        judge_pipeline_record(*run_recorded(answer((ROOT / "solutions" / "live-1f1b.py").read_text()), 3, 3, 4),
                              3, 3, seed=5)


def test_through_the_judge_the_all_gather_answer_scores_nothing(tmp_path):
    """The same answer in the judge's sandbox: recorded in the learner process, judged in the checker."""
    import json
    import subprocess

    path = tmp_path / "all_gather.py"
    path.write_text(ALL_GATHER, encoding="utf-8")
    result = subprocess.run([sys.executable, str(ROOT / "practice" / "judge.py"), "--lang", "zh", "test", "live-1f1b",
                             str(path), "--json"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.JSONDecoder().raw_decode(result.stdout)[0]   # the judge's summary line follows
    report = report[0] if isinstance(report, list) else report
    assert report["score"] == 0 and report["passed"] == 0
    assert all(r["verdict"] == "failed" and "集合通信 (collective)" in r["message"] for r in report["results"])


def test_an_all_forwards_first_order_fails_as_not_1f1b(answer):
    gpipe = (ROOT / "solutions" / "live-1f1b.py").read_text().replace(
        "    warm = min(world_size - rank - 1, m)\n", "    warm = m   # GPipe: every forward first\n")
    assert "GPipe" in gpipe
    with pytest.raises(CheckFailed, match="顺序不是 1F1B"):
        check_pipeline_step(answer(gpipe), world_size=3, m=3, seed=9)
