"""Where ``Costs.overlap`` comes from: one F&B pair on two streams, compute and communication.

A MoE transformer block's forward chunk is four sub-steps in a chain: attention (compute), dispatch (all-to-all),
expert MLP (compute), combine (all-to-all).  Its backward chunk runs the mirror chain: combine's backward
(all-to-all), MLP backward (compute), dispatch's backward (all-to-all), attention backward (compute).  Run alone, a
chunk leaves the GPU idle during each all-to-all.  DualPipe runs the forward of one micro-batch and the backward
of another as a pair: a compute stream and a communication stream, each sub-step starting when its stream is free
and the previous sub-step of its own chunk is done, so one chunk's all-to-all runs under the other's compute.

:func:`pair_schedule` lists-schedules the two chains greedily (each stream takes the ready sub-step that became
ready first; ties go to the backward chunk, whose gradient the previous rank waits for).  The pair's length over
the serial length of the two chunks is the ``overlap`` coefficient the simulator takes.  ``sm_share`` is the
share of the GPU's SMs set aside for communication kernels (DeepSeek-V3 reserves 20 of 132): compute then runs on
the rest, ``1 / (1 - sm_share)`` slower, while the all-to-alls stop competing with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .validation import is_number

COMPUTE, COMM = "compute", "comm"


@dataclass(frozen=True)
class SubStep:
    chunk: str        # "F" or "B"
    name: str         # attention, dispatch, mlp, combine
    stream: str       # COMPUTE or COMM
    start: float
    end: float


def block_chunks(attention: float = 1.0, mlp: float = 1.0, dispatch: float = 1.0, combine: float = 1.0,
                 backward_factor: float = 2.0) -> dict[str, list[tuple[str, str, float]]]:
    """The forward and backward chains of one MoE block: (name, stream, duration).  Backward compute costs
    ``backward_factor`` x the forward's; an all-to-all moves the same bytes both ways, so it costs the same."""
    for name, value in (("attention", attention), ("mlp", mlp), ("dispatch", dispatch), ("combine", combine),
                        ("backward_factor", backward_factor)):
        if not is_number(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative number (finite), got {value!r}")
    k = backward_factor
    return {
        "F": [("attention", COMPUTE, attention), ("dispatch", COMM, dispatch), ("mlp", COMPUTE, mlp),
              ("combine", COMM, combine)],
        "B": [("combine", COMM, combine), ("mlp", COMPUTE, k * mlp), ("dispatch", COMM, dispatch),
              ("attention", COMPUTE, k * attention)],
    }


def pair_schedule(chunks: dict[str, list[tuple[str, str, float]]], sm_share: float = 0.0) -> list[SubStep]:
    """Both chains on a compute and a communication stream (see the module docstring); sub-steps in start order."""
    if not 0 <= sm_share < 1:
        raise ValueError(f"sm_share must be in [0, 1), got {sm_share!r}")
    slow = 1.0 / (1.0 - sm_share)
    pos = {c: 0 for c in chunks}                 # next sub-step of each chain
    ready = {c: 0.0 for c in chunks}             # when that sub-step's predecessor ended
    free = {COMPUTE: 0.0, COMM: 0.0}
    done: list[SubStep] = []
    while any(pos[c] < len(chunks[c]) for c in chunks):
        # the next sub-step to place: the one that can start earliest; ties to the backward chunk
        options = []
        for c, chain in chunks.items():
            if pos[c] < len(chain):
                name, stream, dur = chain[pos[c]]
                options.append((max(ready[c], free[stream]), c != "B", c, name, stream, dur))
        start, _, c, name, stream, dur = min(options)
        end = start + dur * (slow if stream == COMPUTE else 1.0)
        done.append(SubStep(c, name, stream, start, end))
        free[stream], ready[c], pos[c] = end, end, pos[c] + 1
    return sorted(done, key=lambda s: (s.start, s.stream))


def serial_length(chunks: dict[str, list[tuple[str, str, float]]]) -> float:
    """The two chunks run one after the other, no overlap, all SMs computing: the simulator's F + B."""
    return sum(d for chain in chunks.values() for _, _, d in chain)


def overlap_coefficient(chunks: dict[str, list[tuple[str, str, float]]], sm_share: float = 0.0) -> float:
    """The pair's length over the serial length: what ``Costs(overlap=...)`` should be for these chunks."""
    serial = serial_length(chunks)
    if serial == 0:
        return 1.0
    return max(s.end for s in pair_schedule(chunks, sm_share)) / serial


__all__ = ["COMPUTE", "COMM", "SubStep", "block_chunks", "pair_schedule", "serial_length", "overlap_coefficient"]
