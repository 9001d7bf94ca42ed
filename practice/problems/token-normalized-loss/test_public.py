import torch
import torch.nn.functional as F

from course.checks import assert_tensor_close

from submission import accumulated_grad


def whole_batch_grad(weight, microbatches):
    w = weight.clone().requires_grad_(True)
    x = torch.cat([mb[0] for mb in microbatches])
    y = torch.cat([mb[1] for mb in microbatches])
    F.cross_entropy(x @ w, y, ignore_index=-100).backward()
    return w.grad


def test_two_microbatches_of_different_length():
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(3, 5, generator=gen, dtype=torch.float64)
    mbs = [(torch.randn(4, 3, generator=gen, dtype=torch.float64), torch.tensor([0, 1, 2, 3])),
           (torch.randn(2, 3, generator=gen, dtype=torch.float64), torch.tensor([4, -100]))]
    assert_tensor_close(accumulated_grad(weight, mbs), whole_batch_grad(weight, mbs), "两个 micro-batch 的梯度",
                        "一共有 5 个 token，不是 2 个 micro-batch 各占一半", atol=1e-10, rtol=1e-10)
