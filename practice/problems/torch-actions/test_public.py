from course.checks import assert_equal, assert_not_using, assert_raises, assert_true
from course.i18n import tr
from course.plan import Plan
from course.schedules import build

from submission import from_actions, to_actions


def test_zb_h1_two_ranks():
    got = to_actions(build("zb-h1", 2, 2))
    assert_equal(got[1][:2], ["1F0", "1I0"], tr("to_actions(zb-h1 p=2 m=2) rank 1 的前两个动作",
                                                "the first two actions of to_actions(zb-h1 p=2 m=2)'s rank 1"),
                 tr("有 W 的 plan 里，课程的 B 只是 input gradient",
                    "in a plan with W, the course's B is the input gradient only"))
    assert_not_using(to_actions, "course.torch_bridge")


def test_sends_and_receives_of_a_tiny_1f1b():
    got = to_actions(build("1f1b", 2, 1), comms=True)
    # rank 0 runs F0 then B0, rank 1 F0 then B0: the activation goes 0 -> 1, the gradient 1 -> 0
    assert_equal(sorted(got[0]), sorted(["0F0", "0SEND_F0", "0RECV_B0", "0B0"]),
                 tr("to_actions(1f1b p=2 m=1, comms=True) rank 0 的动作（不计顺序）",
                    "rank 0's actions of to_actions(1f1b p=2 m=1, comms=True), in any order"),
                 tr("torch 的收发动作写成 stage、类型、micro-batch，例如 3RECV_F1；接收写的是接收方的 stage",
                    "torch writes a send or receive as stage, type, micro-batch, e.g. 3RECV_F1; a receive names the "
                    "receiving stage"))
    assert_true(got[1].index("1RECV_F0") < got[1].index("1F0"),
                tr(f"rank 1 要先接收激活再算 F0，得到 {got[1]}",
                   f"rank 1 must receive the activation before F0, got {got[1]}"))


def test_back_from_torch():
    assert_equal(from_actions([["0F0", "0B0"], ["1F0", "1B0"]]), [["F0", "B0"], ["F0", "B0"]],
                 "from_actions(1F1B p=2 m=1)")
    assert_not_using(from_actions, "course.torch_bridge")


def test_invalid_plan_is_rejected():
    assert_raises(ValueError, to_actions, Plan.parse("F0 B0 F0\nF0 B0"),
                  hint=tr("先调用 plan.validate()", "call plan.validate() first"))
