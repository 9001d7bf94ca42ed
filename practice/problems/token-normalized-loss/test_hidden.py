import random

import torch
import torch.nn.functional as F

from course.checks import assert_not_using, assert_raises, assert_tensor_close, assert_true, fresh_seed
from course.i18n import tr

from submission import finalize, microbatch_grad

HINT = tr("microbatch_grad 只看得到一个 micro-batch：它的梯度要能在 flush 之后缩放成整个全局 batch 的 token 平均",
          "microbatch_grad sees one micro-batch: its gradient must be one that finalize can scale into the whole "
          "global batch's token mean after the flush")


def global_token_mean_grad(weight, replicas):
    w = weight.clone().requires_grad_(True)
    x = torch.cat([x for mbs in replicas for x, _ in mbs])
    y = torch.cat([y for mbs in replicas for _, y in mbs])
    tokens = int((y != -100).sum())
    (F.cross_entropy(x @ w, y, ignore_index=-100, reduction="sum") / max(tokens, 1)).backward()
    return w.grad


def data_parallel_step(weight, replicas, reduce):
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


def random_replicas(gen, rng, d, vocab):
    replicas = []
    for _ in range(rng.randint(1, 4)):
        mbs = []
        for _ in range(rng.randint(1, 5)):
            rows = rng.randint(1, 9)
            x = torch.randn(rows, d, generator=gen, dtype=torch.float64)
            y = torch.randint(0, vocab, (rows,), generator=gen)
            pad = rng.randint(0, rows)              # trailing padding; now and then all of it
            if pad:
                y[rows - pad:] = -100
            mbs.append((x, y))
        replicas.append(mbs)
    return replicas


def test_random_global_batches():
    seed = fresh_seed()
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    for case in range(20):
        d, vocab, reduce = rng.randint(1, 6), rng.randint(2, 12), rng.choice(["sum", "mean"])
        weight = torch.randn(d, vocab, generator=gen, dtype=torch.float64)
        replicas = random_replicas(gen, rng, d, vocab)
        before = weight.clone()
        got = data_parallel_step(weight, replicas, reduce)
        what = tr(f"第 {case} 组：{len(replicas)} 个副本，all-reduce 用 {reduce} (seed={seed})",
                  f"case {case}: {len(replicas)} replicas, all-reduce by {reduce} (seed={seed})")
        assert_tensor_close(got, global_token_mean_grad(weight, replicas), what, HINT, atol=1e-10, rtol=1e-10)
        assert_tensor_close(weight, before, tr("weight 本身", "weight itself"),
                            tr("不要改动传进来的 weight", "do not modify the weight passed in"), atol=0, rtol=0)


def test_padding_only():
    gen = torch.Generator().manual_seed(3)
    weight = torch.randn(2, 3, generator=gen, dtype=torch.float64)
    pad = (torch.randn(2, 2, generator=gen, dtype=torch.float64), torch.tensor([-100, -100]))
    real = (torch.randn(3, 2, generator=gen, dtype=torch.float64), torch.tensor([0, 2, 1]))
    hint = tr("没有 token 的 micro-batch 不贡献梯度；一个 token 都没有时梯度是 0，不能除以 0",
              "a micro-batch without tokens adds nothing; with no token at all the gradient is 0, not a division by 0")
    for replicas, what, reduces in (([[real], [pad]], tr("一个副本全是 padding", "one replica of padding only"),
                                     ("sum",)),
                                    ([[pad], [pad, pad]], tr("整个全局 batch 没有一个 token",
                                                             "a global batch without a token"), ("sum", "mean"))):
        for reduce in reduces:
            assert_tensor_close(data_parallel_step(weight, replicas, reduce), global_token_mean_grad(weight, replicas),
                                f"{what} ({reduce})", hint, atol=1e-10, rtol=1e-10)


def test_unknown_reduce_is_refused():
    assert_raises(ValueError, finalize, torch.zeros(2, 2, dtype=torch.float64), 3, 2, "max",
                  what="finalize(grad, 3, 2, 'max')",
                  hint=tr("reduce 只能是 'sum' 或 'mean'", "reduce is 'sum' or 'mean' only"))
    for fn in (microbatch_grad, finalize):
        assert_not_using(fn, "course")
