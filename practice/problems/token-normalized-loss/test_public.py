import torch
import torch.nn.functional as F

from course.checks import assert_not_using, assert_tensor_close, assert_true
from course.i18n import tr

from submission import finalize, microbatch_grad

HINT = tr("microbatch_grad 只看得到一个 micro-batch，不知道整个 batch 的 token 数：它返回什么，finalize "
          "才能把累加的结果变成按 token 的平均？",
          "microbatch_grad sees one micro-batch and cannot know the batch's token count: what can it return that "
          "finalize can still turn into the token mean?")


def global_token_mean_grad(weight, replicas):
    """The reference: one backward of the whole global batch's token-mean cross-entropy."""
    w = weight.clone().requires_grad_(True)
    x = torch.cat([x for mbs in replicas for x, _ in mbs])
    y = torch.cat([y for mbs in replicas for _, y in mbs])
    tokens = int((y != -100).sum())
    (F.cross_entropy(x @ w, y, ignore_index=-100, reduction="sum") / max(tokens, 1)).backward()
    return w.grad


def data_parallel_step(weight, replicas, reduce):
    """Around the two functions, what a pipeline with data parallelism does: each replica accumulates its
    micro-batches one backward at a time, the replicas' gradients are all-reduced with ``reduce``, their token
    counts summed, and finalize runs once."""
    sums, tokens = [], 0
    for mbs in replicas:
        acc = torch.zeros_like(weight)
        for x, y in mbs:
            grad, n = microbatch_grad(weight, x, y)
            assert_true(isinstance(grad, torch.Tensor) and tuple(grad.shape) == tuple(weight.shape) and type(n) is int,
                        tr(f"microbatch_grad 应返回 (形状 {tuple(weight.shape)} 的张量, int)",
                           f"microbatch_grad should return (a tensor of shape {tuple(weight.shape)}, an int)"))
            acc = acc + grad
            tokens += n
        sums.append(acc)
    reduced = sum(sums) / (len(sums) if reduce == "mean" else 1)
    return finalize(reduced, tokens, len(replicas), reduce)


def microbatch(gen, rows, valid, d, vocab):
    x = torch.randn(rows, d, generator=gen, dtype=torch.float64)
    y = torch.randint(0, vocab, (rows,), generator=gen)
    y[valid:] = -100
    return x, y


def test_one_replica_summed():
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(3, 5, generator=gen, dtype=torch.float64)
    replicas = [[microbatch(gen, 4, 4, 3, 5), microbatch(gen, 2, 1, 3, 5)]]
    assert_tensor_close(data_parallel_step(weight, replicas, "sum"), global_token_mean_grad(weight, replicas),
                        tr("一个副本、两个 micro-batch（4 个和 1 个 token）",
                           "one replica, two micro-batches (4 and 1 tokens)"),
                        HINT, atol=1e-10, rtol=1e-10)
    assert_not_using(microbatch_grad, "course")


def test_two_replicas_averaged():
    gen = torch.Generator().manual_seed(1)
    weight = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    replicas = [[microbatch(gen, 3, 3, 3, 4), microbatch(gen, 3, 3, 3, 4)], [microbatch(gen, 3, 1, 3, 4)]]
    assert_tensor_close(data_parallel_step(weight, replicas, "mean"), global_token_mean_grad(weight, replicas),
                        tr("两个副本（6 个和 1 个 token），梯度 all-reduce 取平均",
                           "two replicas (6 and 1 tokens), gradients all-reduced with a mean"),
                        tr("all-reduce 取平均时，梯度已经除过一次副本数", "a mean all-reduce has already divided the "
                           "gradients by the number of replicas"), atol=1e-10, rtol=1e-10)
