"""Exercise token-normalized-loss (chapter 3): gradient accumulation over micro-batches of different lengths."""

import torch
import torch.nn.functional as F


def accumulated_grad(weight, microbatches):
    """The gradient of the whole batch's token-mean cross-entropy, accumulated one micro-batch at a time.

    ``microbatches``: list of (x (n, d), targets (n,)) with -100 marking padding; logits = x @ weight.
    """
    raise NotImplementedError  # TODO: your code here
