"""One rule for a count and one for a number (course.validation), and the places that used to differ from it."""

import numpy as np
import pytest

from course.costs import Costs
from course.validation import check_counts, check_positive_number, is_count, is_number


@pytest.mark.parametrize("value,count,number", [
    (1, True, True), (3, True, True), (0, False, True), (-2, False, True), (True, False, False),
    (2.0, False, True), (np.float64(0.5), False, True), (np.int64(3), False, True), ("3", False, False),
    (float("nan"), False, False), (float("inf"), False, False), (None, False, False),
])
def test_what_a_count_and_a_number_are(value, count, number):
    assert is_count(value) is count and is_number(value) is number


def test_the_messages_name_the_argument_and_show_the_value():
    check_counts(p=4, m=8)
    with pytest.raises(ValueError, match=r"^m must be a positive integer, got True$"):
        check_counts(p=4, m=True)
    check_positive_number("timeout", 0.5, "seconds")
    with pytest.raises(ValueError, match=r"^timeout must be a positive finite number of seconds, got nan$"):
        check_positive_number("timeout", float("nan"), "seconds")
    with pytest.raises(ValueError, match=r"^flops_per_s must be a positive finite number, got 0$"):
        check_positive_number("flops_per_s", 0)


def test_places_that_used_to_disagree_now_follow_the_rule():
    from course.formulas import predict
    from course.live.launcher import launch
    from course.memory import static_bytes
    from course.minipipe import check_args
    from course.overlap import block_chunks
    from course.plan import Plan
    from course.replay import replay
    from course.search import Problem

    with pytest.raises(ValueError, match="dp must be a positive integer"):
        static_bytes(10, dp=True)                      # True was taken for dp=1
    with pytest.raises(ValueError, match="lengths"):
        check_args(2, 2, "parity", [True, 3])          # a token count of True
    with pytest.raises(ValueError, match="attention"):
        block_chunks(attention=float("nan"))           # NaN slipped through
    with pytest.raises(ValueError, match="durations must be finite"):
        replay(Plan.parse("F0 B0"), [[1.0, float("nan")]])
    with pytest.raises(ValueError, match="stall must be a positive finite number"):
        launch(print, 1, stall=float("inf"))
    # numpy numbers are numbers everywhere Costs accepts them
    assert Problem.make(2, 4, None, np.int64(2)).cap == (2, 2)
    assert predict("1f1b", 4, 8, Costs(f=np.int64(1))).makespan == predict("1f1b", 4, 8, Costs(f=1)).makespan
