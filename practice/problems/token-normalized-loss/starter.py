"""Exercise token-normalized-loss (chapter 3): the token-mean gradient of a global batch spread over micro-batches and
data-parallel replicas, when no micro-batch knows the batch's token count."""

import torch
import torch.nn.functional as F


def microbatch_grad(weight, x, targets):
    """What one micro-batch adds to its replica's accumulated gradient, and how many tokens it holds.

    Called once per micro-batch, with that micro-batch only: logits = x @ weight (x of shape (n, d), weight (d, V)),
    targets of shape (n,) with -100 marking padding.  Returns (a tensor shaped like weight, an int).
    """
    raise NotImplementedError  # TODO: your code here


def finalize(grad, tokens, replicas, reduce):
    """The gradient of the global batch's token-mean loss, after the flush and the data-parallel all-reduce.

    ``grad``: the replicas' accumulated ``microbatch_grad`` tensors, all-reduced across the ``replicas`` replicas
    with ``reduce`` ("sum", or "mean" as DDP does by default); ``tokens``: the replicas' token counts summed (the
    global batch's count).  A ValueError for any other ``reduce``.
    """
    raise NotImplementedError  # TODO: your code here
