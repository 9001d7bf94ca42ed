from course.checks import assert_equal
from course.schedules import build

from submission import to_actions


def test_one_f_one_b_uses_full_backward():
    assert_equal(to_actions(build("1f1b", 2, 2)), [["0F0", "0F1", "0B0", "0B1"], ["1F0", "1B0", "1F1", "1B1"]],
                 "to_actions(1F1B p=2 m=2)", "没有 W 的 plan 里，B 是完整的 backward：torch 写成 B")


def test_split_backward_uses_input_gradient():
    assert_equal(to_actions(build("zb-h1", 2, 2)),
                 [["0F0", "0F1", "0I0", "0W0", "0I1", "0W1"], ["1F0", "1I0", "1F1", "1I1", "1W0", "1W1"]],
                 "to_actions(ZB-H1 p=2 m=2)", "有 W 的 plan 里，B 是 input gradient：torch 写成 I")
