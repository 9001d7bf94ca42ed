import random

import torch
import torch.nn.functional as F

from course.checks import assert_not_using, assert_tensor_close, fresh_seed

from submission import accumulated_grad


def whole_batch_grad(weight, microbatches):
    w = weight.clone().requires_grad_(True)
    x = torch.cat([mb[0] for mb in microbatches])
    y = torch.cat([mb[1] for mb in microbatches])
    loss = F.cross_entropy(x @ w, y, ignore_index=-100, reduction="sum") / max(int((y != -100).sum()), 1)
    loss.backward()
    return w.grad


def batch(gen, rng, d, vocab):
    mbs = []
    for _ in range(rng.randint(1, 6)):
        n = rng.randint(1, 9)
        x = torch.randn(n, d, generator=gen, dtype=torch.float64)
        y = torch.randint(0, vocab, (n,), generator=gen)
        pad = rng.randint(0, n - 1)
        if pad:
            y[n - pad:] = -100
        mbs.append((x, y))
    return mbs


def test_random_batches():
    seed = fresh_seed()
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    for case in range(20):
        d, vocab = rng.randint(1, 6), rng.randint(2, 12)
        weight = torch.randn(d, vocab, generator=gen, dtype=torch.float64)
        mbs = batch(gen, rng, d, vocab)
        before = weight.clone()
        got = accumulated_grad(weight, mbs)
        assert_tensor_close(got, whole_batch_grad(weight, mbs), f"case {case} (seed={seed})",
                            "每个 micro-batch 的 loss 要除以整个 batch 的 token 数", atol=1e-10, rtol=1e-10)
        assert_tensor_close(weight, before, "weight 本身", "不要改动传进来的 weight", atol=0, rtol=0)


def test_equal_lengths_match_the_mean_of_means():
    gen = torch.Generator().manual_seed(7)
    weight = torch.randn(4, 6, generator=gen, dtype=torch.float64)
    mbs = [(torch.randn(5, 4, generator=gen, dtype=torch.float64), torch.randint(0, 6, (5,), generator=gen))
           for _ in range(3)]
    assert_tensor_close(accumulated_grad(weight, mbs), whole_batch_grad(weight, mbs), "三个一样长的 micro-batch",
                        atol=1e-10, rtol=1e-10)


def test_all_padding_in_one_microbatch():
    gen = torch.Generator().manual_seed(3)
    weight = torch.randn(2, 3, generator=gen, dtype=torch.float64)
    mbs = [(torch.randn(3, 2, generator=gen, dtype=torch.float64), torch.tensor([0, 2, 1])),
           (torch.randn(2, 2, generator=gen, dtype=torch.float64), torch.tensor([-100, -100]))]
    assert_tensor_close(accumulated_grad(weight, mbs), whole_batch_grad(weight, mbs), "一个 micro-batch 全是 padding",
                        "全是 padding 的 micro-batch 不贡献梯度，也不能除以 0", atol=1e-10, rtol=1e-10)
    assert_not_using(accumulated_grad, "course")
