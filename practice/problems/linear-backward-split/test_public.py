import torch

from course.checks import assert_not_using, assert_tensor_close
from course.i18n import tr

from submission import linear_input_grad, linear_weight_grad


def reference(x, weight, bias, grad_output):
    x, weight, bias = (t.clone().requires_grad_() for t in (x, weight, bias))
    ((x @ weight.T + bias) * grad_output).sum().backward()   # scalar backward: same gradients
    return x.grad, weight.grad, bias.grad


def test_small_matrix():
    gen = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(4, 3, generator=gen), torch.randn(2, 3, generator=gen), torch.randn(2, generator=gen)
    gy = torch.randn(4, 2, generator=gen)
    dx, dw, db = reference(x, w, b, gy)
    with torch.no_grad():
        got_dx = linear_input_grad(gy, w)
        got_dw, got_db = linear_weight_grad(gy, x)
    assert_tensor_close(got_dx, dx, "linear_input_grad (dX)", "dX = dY @ W")
    assert_tensor_close(got_dw, dw, tr("linear_weight_grad 的 dW", "linear_weight_grad's dW"), "dW = dY^T @ X")
    assert_tensor_close(got_db, db, tr("linear_weight_grad 的 db", "linear_weight_grad's db"),
                        tr("db 是 dY 按行求和", "db is dY summed over its rows"))
    for fn in (linear_input_grad, linear_weight_grad):
        assert_not_using(fn, "torch.autograd", "torch.func", names=("backward", "grad", "autograd", "vjp"))
