"""course.minipipe: the minimal 1F1B worker of chapter 3 (blocking p2p: naive deadlocks, parity and batched run)."""

import pytest
import torch

from course.live import DeadlockDetected, stray_workers
from course.lower import SEND, blocking_deadlock, exchanges, lower
from course.minipipe import ROWS, batch, max_error, reference, run, stage, token_loss
from course.schedules import build

LENGTHS = [4, 1, 3, 2, 4, 4, 2, 3]


@pytest.mark.live
@pytest.mark.timeout(300)
def test_parity_and_batched_blocking_p2p_run_and_match_the_token_mean_gradients():
    want = reference(4, 8, LENGTHS)
    for comm in ("parity", "batched"):
        assert blocking_deadlock(exchanges(lower(build("1f1b", 4, 8)), comm)) is None   # predicted to run
        assert max_error(run(4, 8, comm, LENGTHS), want) < 1e-12, comm
    assert max_error(run(3, 2, "parity", [1, 3]), reference(3, 2, [1, 3])) < 1e-12   # m < p: no steady state


@pytest.mark.live
@pytest.mark.timeout(300)
def test_naive_blocking_p2p_deadlocks_between_the_last_two_ranks():
    with pytest.raises(DeadlockDetected) as info:
        run(4, 8, "naive", LENGTHS, stall=1.0)
    states = info.value.states
    assert "send to rank 3" in states[2] and "send to rank 2" in states[3], states
    # the lowered 1F1B, issued as this worker issues it, predicts every rank's call
    predicted = blocking_deadlock(exchanges(lower(build("1f1b", 4, 8)), "naive"))
    assert set(predicted) == set(states)
    for r, a in predicted.items():
        call = f"blocked in send to rank {a.peer}" if a.kind == SEND else f"blocked in recv from rank {a.peer}"
        assert call in states[r], (r, states[r], a)
    assert not stray_workers()


def test_token_mean_differs_from_the_mean_of_micro_batch_means_when_lengths_differ():
    """The bug the worker avoids: loss_i.mean() / m weights a 1-token micro-batch like a 4-token one."""
    x, y, mask = batch(len(LENGTHS), LENGTHS)
    model = stage(0)

    def grads(loss):
        model.zero_grad()
        loss.backward()
        return [q.grad.clone() for q in model.parameters()]

    token_mean = grads(token_loss(model(x), y, mask, mask.sum()))
    per_mb = grads(sum(token_loss(model(x[i]), y[i], mask[i], mask[i].sum()) for i in range(len(LENGTHS)))
                   / len(LENGTHS))
    summed = grads(sum(token_loss(model(x[i]), y[i], mask[i], mask.sum()) for i in range(len(LENGTHS))))
    assert max((a - b).abs().max().item() for a, b in zip(summed, token_mean)) < 1e-12
    assert max((a - b).abs().max().item() for a, b in zip(per_mb, token_mean)) > 1e-3
    full = [ROWS] * 4
    x, y, mask = batch(4, full)
    same_lengths = (grads(token_loss(model(x), y, mask, mask.sum())),
                    grads(sum(token_loss(model(x[i]), y[i], mask[i], mask[i].sum()) for i in range(4)) / 4))
    assert all(torch.allclose(a, b, atol=1e-12) for a, b in zip(*same_lengths))   # equal lengths: 1/m is right


def test_bad_arguments_are_refused_in_one_line():
    with pytest.raises(ValueError, match="comm must be one of naive, parity, batched"):
        run(2, 2, "async")
    with pytest.raises(ValueError, match="lengths must list m=2 token counts between 1 and 4"):
        run(2, 2, "parity", [0, 5])
    with pytest.raises(ValueError, match="m must be a positive integer"):
        run(2, 0)
