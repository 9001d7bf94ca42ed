"""interleaved-flex: torch's relaxed interleaved 1F1B (groups of m // max(1, m // p) micro-batches)."""

import pytest

from course.schedules import build
from course.sim import simulate
from course.torch_bridge import torch_plan


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("v", [2, 3])
def test_op_for_op_torchs_order_for_every_m_it_takes(p, v):
    taken = 0
    for m in range(1, 3 * p + 3):
        try:
            ours = build("interleaved-flex", p, m, v=v)
        except ValueError:
            with pytest.raises(ValueError, match="multiple of the number of rounds"):
                torch_plan("ScheduleInterleaved1F1B", p, m, v=v)
            continue
        theirs = torch_plan("ScheduleInterleaved1F1B", p, m, v=v)
        assert ours.format() == theirs.format(), (p, m, v)
        assert ours.placement == theirs.placement
        simulate(ours)                              # runs to the end: no deadlock
        taken += 1
    assert taken >= 2 * p                           # every m up to 2p - 1 at least, so the relaxation is exercised


def test_torchs_docstring_examples_and_a_clear_refusal():
    assert build("interleaved-flex", 4, 10).m == 10    # 2 rounds of 5
    assert build("interleaved-flex", 4, 3).m == 3      # 1 round of 3
    with pytest.raises(ValueError, match=r"got p=4, m=9: 2 rounds\); allowed near it: m = 5, 6, 7, 8, 10, 12"):
        build("interleaved-flex", 4, 9)
    with pytest.raises(ValueError, match="interleaved needs m divisible by p"):
        build("interleaved", 4, 10)


@pytest.mark.parametrize("p, m, v", [(2, 4, 2), (4, 8, 2), (4, 12, 3), (3, 9, 4)])
def test_megatrons_order_when_m_is_a_multiple_of_p_above_p(p, m, v):
    assert build("interleaved-flex", p, m, v=v).format() == build("interleaved", p, m, v=v).format()


def test_at_m_equal_p_megatron_runs_every_forward_first_and_flex_does_not():
    flex, classic = build("interleaved-flex", 4, 4, v=2), build("interleaved", 4, 4, v=2)
    assert classic.ranks[0][:8] == tuple(op for op in classic.ranks[0] if op.kind == "F")
    assert flex.format() != classic.format()
    assert simulate(flex).makespan == simulate(classic).makespan
