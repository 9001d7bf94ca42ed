import random

import torch

from course.checks import assert_not_using, assert_tensor_close, assert_true, fresh_seed
from course.i18n import tr

from submission import linear_input_grad, linear_weight_grad


def reference(x, weight, bias, grad_output):
    x, weight, bias = (t.clone().requires_grad_() for t in (x, weight, bias))
    ((x @ weight.T + bias) * grad_output).sum().backward()   # scalar backward: same gradients
    return x.grad, weight.grad, bias.grad


def check(shape, n_out, dtype, seed, what):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=gen, dtype=dtype)
    w = torch.randn(n_out, shape[-1], generator=gen, dtype=dtype)
    b = torch.randn(n_out, generator=gen, dtype=dtype)
    gy = torch.randn(*shape[:-1], n_out, generator=gen, dtype=dtype)
    dx, dw, db = reference(x, w, b, gy)
    with torch.no_grad():
        got_dx = linear_input_grad(gy, w)
        pair = linear_weight_grad(gy, x)
    assert_true(type(pair) is tuple and len(pair) == 2,
                tr(f"{what}: linear_weight_grad 要返回 (dW, db) 两个元素的 tuple",
                   f"{what}: linear_weight_grad must return a tuple of two, (dW, db)"))
    tol = 1e-10 if dtype is torch.float64 else 1e-4
    assert_tensor_close(got_dx, dx, f"{what}: dX", atol=tol, rtol=tol)
    assert_tensor_close(pair[0], dw, f"{what}: dW", tr("多个前导维度 (leading dims) 都要求和",
                                                       "sum over every leading dimension"), atol=tol, rtol=tol)
    assert_tensor_close(pair[1], db, f"{what}: db", atol=tol, rtol=tol)


def test_sequence_batches():
    check((2, 5, 3), 4, torch.float32, 1, tr("x 形状 (2, 5, 3)", "x of shape (2, 5, 3)"))
    check((1, 1), 1, torch.float64, 2, tr("x 形状 (1, 1)", "x of shape (1, 1)"))
    check((7,), 3, torch.float64, 3, tr("x 形状 (7,) 没有 batch 维", "x of shape (7,), no batch dimension"))


def test_random_shapes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for case in range(20):
        shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4)))
        check(shape, rng.randint(1, 6), rng.choice([torch.float32, torch.float64]), rng.randrange(1 << 30),
              f"case {case} shape={shape} (seed={seed})")
    for fn in (linear_input_grad, linear_weight_grad):
        assert_not_using(fn, "torch.autograd", "torch.func", names=("backward", "grad", "autograd", "vjp"))
