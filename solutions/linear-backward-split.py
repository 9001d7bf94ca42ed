"""Exercise linear-backward-split (chapter 5): a Linear layer's backward by hand, split into B (dX) and W (dW, db)."""


def linear_input_grad(grad_output, weight):
    """B: dL/dX of y = x @ weight.T + bias, given grad_output = dL/dy.  Works for any leading dimensions."""
    ### BEGIN SOLUTION
    return grad_output @ weight
    ### END SOLUTION


def linear_weight_grad(grad_output, x):
    """W: (dL/dweight, dL/dbias) of y = x @ weight.T + bias, summed over every leading dimension."""
    ### BEGIN SOLUTION
    g = grad_output.reshape(-1, grad_output.shape[-1])
    return g.T @ x.reshape(-1, x.shape[-1]), g.sum(dim=0)
    ### END SOLUTION
