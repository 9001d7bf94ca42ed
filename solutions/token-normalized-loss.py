"""Exercise token-normalized-loss (chapter 3): gradient accumulation over micro-batches of different lengths."""

import torch
import torch.nn.functional as F


def accumulated_grad(weight, microbatches):
    """The gradient of the whole batch's token-mean cross-entropy, accumulated one micro-batch at a time.

    ``microbatches``: list of (x (n, d), targets (n,)) with -100 marking padding; logits = x @ weight.
    """
    ### BEGIN SOLUTION
    w = weight.detach().clone().requires_grad_(True)
    # Every stage needs the batch's token count before the first backward: it is known when the batch is cut.
    total = sum(int((targets != -100).sum()) for _, targets in microbatches)
    for x, targets in microbatches:
        # Sum over this micro-batch's tokens, divided by the batch's tokens: summing these over micro-batches
        # gives exactly the token mean (dividing each micro-batch's own mean by m does not).
        loss = F.cross_entropy(x @ w, targets, ignore_index=-100, reduction="sum") / max(total, 1)
        loss.backward()
    return w.grad if w.grad is not None else torch.zeros_like(weight)
    ### END SOLUTION
