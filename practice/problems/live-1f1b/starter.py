"""Exercise live-1f1b (chapter 3): one 1F1B training step of one pipeline stage on real gloo processes."""

import torch
import torch.distributed as dist


def train_step(stage, rank, world_size, num_microbatches, shape, inputs, targets, loss_fn):
    """Run one 1F1B training step of ``stage`` (this rank's part of the model) and accumulate its gradients.

    rank 0 gets ``inputs`` (a list of num_microbatches tensors) and the last rank ``targets``; every activation
    and gradient passed between ranks has shape ``shape``.  The batch loss is the mean of the micro-batches'
    losses.  Returns the batch loss as a float on the last rank, None on the others.
    """
    raise NotImplementedError  # TODO: your code here
