"""Bytes a rank really holds for the backward: every tensor autograd saves, counted by storage, while it is saved.

``SavedBytes.hooks()`` is a ``torch.autograd.graph.saved_tensors_hooks`` context: inside it, each tensor an op saves
for its backward goes through ``pack``.  A storage is counted once however many saved tensors view it (q, k and v
of one qkv output, or the output of one layer that is the next layer's input), and parameters (the weights a
matmul saves for the input gradient) are not activations and are skipped.  ``pack`` wraps the tensor in a small
holder that autograd keeps in its graph instead of the tensor; when autograd drops it (a full backward frees each
node's saved tensors as it runs; a split backward's graph lives until its W has run) the holder dies and the
storage is uncounted.  So the level follows what autograd actually keeps, not a rule about which op frees what.
"""

from __future__ import annotations

import weakref


class _Held:
    """A saved tensor as autograd stores it while the hooks are on."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor):
        self.tensor = tensor


class SavedBytes:
    """The bytes of storages saved for the backward on this rank: ``level`` now, ``peak`` so far."""

    def __init__(self, parameters):
        self.skip = {p.untyped_storage().data_ptr() for p in parameters}
        self.live: dict[int, list[int]] = {}     # storage address -> [bytes, saved tensors viewing it]
        self.level = 0
        self.peak = 0

    def hooks(self):
        import torch

        return torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)

    def pack(self, tensor):
        storage = tensor.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in self.skip:
            return tensor
        entry = self.live.get(ptr)
        if entry is None:
            self.live[ptr] = [storage.nbytes(), 1]
            self.level += storage.nbytes()
            self.peak = max(self.peak, self.level)
        else:
            entry[1] += 1
        # detached: the same storage without its grad_fn (a saved output holding its own node would make a
        # reference cycle through autograd's C++ graph that Python's collector cannot see, and never die)
        held = _Held(tensor.detach())
        weakref.finalize(held, self._release, ptr)
        return held

    @staticmethod
    def unpack(held):
        return held.tensor if isinstance(held, _Held) else held

    def _release(self, ptr: int) -> None:
        entry = self.live[ptr]
        entry[1] -= 1
        if entry[1] == 0:
            self.level -= entry[0]
            del self.live[ptr]
