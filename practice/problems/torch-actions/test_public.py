from course.checks import assert_equal, assert_not_using, assert_raises
from course.plan import Plan
from course.schedules import build

from submission import from_actions, to_actions


def test_zb_h1_two_ranks():
    got = to_actions(build("zb-h1", 2, 2))
    assert_equal(got[1][:2], ["1F0", "1I0"], "to_actions(zb-h1 p=2 m=2) rank 1 的前两个动作",
                 "有 W 的 plan 里，课程的 B 只是 input gradient")
    assert_not_using(to_actions, "course.torch_bridge")


def test_back_from_torch():
    assert_equal(from_actions([["0F0", "0B0"], ["1F0", "1B0"]]), [["F0", "B0"], ["F0", "B0"]],
                 "from_actions(1F1B p=2 m=1)")
    assert_not_using(from_actions, "course.torch_bridge")


def test_invalid_plan_is_rejected():
    assert_raises(ValueError, to_actions, Plan.parse("F0 B0 F0\nF0 B0"), hint="先调用 plan.validate()")
