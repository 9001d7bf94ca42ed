"""Exercise live-1f1b (chapter 3): one 1F1B training step of one pipeline stage on real gloo processes."""

import torch
import torch.distributed as dist


def train_step(stage, rank, world_size, num_microbatches, shape, inputs, targets, loss_fn):
    """Run one 1F1B training step of ``stage`` (this rank's part of the model) and accumulate its gradients.

    rank 0 gets ``inputs`` (a list of num_microbatches tensors) and the last rank ``targets``; every activation
    and gradient passed between ranks has shape ``shape``.  The batch loss is the mean of the micro-batches'
    losses.  Returns the batch loss as a float on the last rank, None on the others.
    """
    ### BEGIN SOLUTION
    m = num_microbatches
    first, last = rank == 0, rank == world_size - 1
    saved = {}        # micro-batch -> (stage input, stage output or scaled loss)
    sends = []        # pending isend handles: waited for at the end
    total = 0.0

    def forward(i):
        nonlocal total
        if first:
            x = inputs[i]
        else:
            x = torch.empty(shape, dtype=torch.float64)
            dist.recv(x, src=rank - 1)
            x.requires_grad_()
        y = stage(x)
        if last:
            y = loss_fn(y, targets[i]) / m     # loss scaling: the batch loss is the mean over micro-batches
            total += y.item()
        else:
            sends.append(dist.isend(y.detach(), dst=rank + 1))
        saved[i] = (x, y)

    def backward(i):
        x, y = saved.pop(i)
        if last:
            y.backward()
        else:
            grad = torch.empty(shape, dtype=torch.float64)
            dist.recv(grad, src=rank + 1)
            y.backward(grad)
        if not first:
            sends.append(dist.isend(x.grad, dst=rank - 1))

    warm = min(world_size - rank - 1, m)
    for i in range(warm):
        forward(i)
    for i in range(m - warm):
        forward(warm + i)
        backward(i)
    for i in range(m - warm, m):
        backward(i)
    for handle in sends:
        handle.wait()
    return total if last else None
    ### END SOLUTION
