"""course.overlap: one F&B pair on a compute and a communication stream gives the overlap coefficient."""

from __future__ import annotations

import itertools

import pytest

from course.overlap import COMM, COMPUTE, block_chunks, overlap_coefficient, pair_schedule, serial_length


def totals(chunks):
    return [sum(d for chain in chunks.values() for _, s, d in chain if s == stream) for stream in (COMPUTE, COMM)]


@pytest.mark.parametrize("attn,mlp,a2a", list(itertools.product([0.5, 1.0, 2.0], [1.0, 3.0], [0.0, 0.3, 1.0, 2.5])))
def test_pair_respects_chains_and_streams_and_the_bounds(attn, mlp, a2a):
    chunks = block_chunks(attn, mlp, a2a, a2a)
    steps = pair_schedule(chunks)
    assert len(steps) == 8
    for chunk in ("F", "B"):                     # each chain in order, each sub-step after the one before
        own = [s for s in steps if s.chunk == chunk]
        assert [s.name for s in own] == [n for n, _, _ in chunks[chunk]]
        assert all(a.end <= b.start + 1e-12 for a, b in zip(own, own[1:]))
    for stream in (COMPUTE, COMM):               # a stream runs one sub-step at a time
        own = sorted((s for s in steps if s.stream == stream), key=lambda s: s.start)
        assert all(a.end <= b.start + 1e-12 for a, b in zip(own, own[1:]))
    compute, comm = totals(chunks)
    ov = overlap_coefficient(chunks)
    assert max(compute, comm) / (compute + comm) - 1e-12 <= ov <= 1 + 1e-12
    assert serial_length(chunks) == pytest.approx(compute + comm)


def test_overlap_values():
    assert overlap_coefficient(block_chunks(dispatch=0, combine=0)) == pytest.approx(1.0)   # nothing to hide
    assert overlap_coefficient(block_chunks(1, 1, 1, 1)) == pytest.approx(0.6)              # max(6, 4) / 10
    # SMs set aside for communication slow the compute stream down
    assert overlap_coefficient(block_chunks(1, 1, 1, 1), sm_share=0.2) > overlap_coefficient(block_chunks(1, 1, 1, 1))


def test_bad_input():
    with pytest.raises(ValueError, match="dispatch must be a non-negative number"):
        block_chunks(dispatch=-1)
    with pytest.raises(ValueError, match="attention must be a non-negative number"):
        block_chunks(attention=float("nan"))
    with pytest.raises(ValueError, match="sm_share"):
        pair_schedule(block_chunks(), sm_share=1.0)
