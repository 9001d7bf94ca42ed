"""Exercise token-normalized-loss (chapter 3): the token-mean gradient of a global batch spread over micro-batches and
data-parallel replicas, when no micro-batch knows the batch's token count."""

import torch
import torch.nn.functional as F


def microbatch_grad(weight, x, targets):
    """What one micro-batch adds to its replica's accumulated gradient, and how many tokens it holds.

    Called once per micro-batch, with that micro-batch only: logits = x @ weight (x of shape (n, d), weight (d, V)),
    targets of shape (n,) with -100 marking padding.  Returns (a tensor shaped like weight, an int).
    """
    ### BEGIN SOLUTION
    w = weight.detach().clone().requires_grad_(True)
    # The batch's token count is unknown here, so backpropagate the token-loss *sum*; gradients are linear, so
    # dividing the accumulated sum by the count after the flush gives the token mean exactly.
    loss = F.cross_entropy(x @ w, targets, ignore_index=-100, reduction="sum")
    loss.backward()
    return w.grad, int((targets != -100).sum())
    ### END SOLUTION


def finalize(grad, tokens, replicas, reduce):
    """The gradient of the global batch's token-mean loss, after the flush and the data-parallel all-reduce.

    ``grad``: the replicas' accumulated ``microbatch_grad`` tensors, all-reduced across the ``replicas`` replicas
    with ``reduce`` ("sum", or "mean" as DDP does by default); ``tokens``: the replicas' token counts summed (the
    global batch's count).  A ValueError for any other ``reduce``.
    """
    ### BEGIN SOLUTION
    if reduce not in ("sum", "mean"):
        raise ValueError(f"reduce must be 'sum' or 'mean', got {reduce!r}")
    if tokens == 0:
        return torch.zeros_like(grad)      # nothing to average: no NaN
    # A mean all-reduce has already divided the sum over replicas by their number: undo it, then divide by tokens.
    return grad * (replicas if reduce == "mean" else 1) / tokens
    ### END SOLUTION
