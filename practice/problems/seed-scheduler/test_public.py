from course.checks import assert_equal, assert_not_using
from course.i18n import tr

from submission import dropped_ops, fixed_schedule


def test_one_stage_drops_nothing():
    assert_equal(dropped_ops(1, 4, [1.0, 2.0, 3.0, 4.0]), [], "dropped_ops(1, 4, [1, 2, 3, 4])",
                 tr("只有一个 stage 时，博客的列表是 F、B 交替的", "with one stage the blog's list alternates F and B"))
    assert_not_using(dropped_ops, "course")


def test_fixed_last_stage_keeps_one_micro_batch():
    got = fixed_schedule(4, 3, [1.0, 1.0, 1.0])
    assert_equal(got[3], "F0 B0 F1 B1 F2 B2".split(), "fixed_schedule(4, 3, [1, 1, 1])[3]",
                 tr("1F1B 的最后一个 stage 同时只存 1 份激活：每个 forward 后马上做它的 backward",
                    "1F1B's last stage holds one micro-batch at a time: each forward is followed by its backward"))
    assert_not_using(fixed_schedule, "course.schedules")
