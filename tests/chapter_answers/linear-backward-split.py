"""Chapter 5's hand-derived Linear backward pasted as an answer: cell linear-by-hand and the code cell after it
(dX = dY @ W.T, dW = X.T @ dY for Y = X @ W), with the bias gradient a learner would add (dY summed over rows)."""


def linear_input_grad(grad_output, weight):
    return grad_output @ weight.T


def linear_weight_grad(grad_output, x):
    return x.T @ grad_output, grad_output.sum(dim=0)
