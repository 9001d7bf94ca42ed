from course.checks import assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import dualpipev_from_dualpipe

# DualPipe on P = 2 ranks, 4 micro-batches: [[str(st) for st in steps] for steps in build("dualpipe", 2, 4).ranks]
DUALPIPE_2_4 = [
    "F0.s0 F2.s3 F1.s0 B2.s3 W2.s3 F3.s3&B0.s0 W0.s0 B3.s3 W3.s3 B1.s0 W1.s0".split(),
    "F2.s2 F0.s1 F3.s2 B0.s1 W0.s1 F1.s1&B2.s2 W2.s2 B1.s1 W1.s1 B3.s2 W3.s2".split(),
]


def test_the_unfolded_shape_is_rejected():
    assert_raises(ValueError, dualpipev_from_dualpipe, [["F0"]],
                  hint=tr("DualPipe 的 rank 数是偶数", "DualPipe has an even number of ranks"))
    assert_not_using(dualpipev_from_dualpipe, "course.schedules")


def test_one_rank_from_two():
    got = dualpipev_from_dualpipe(DUALPIPE_2_4)
    assert_equal(len(got), 1, tr("DualPipe p=2 对折以后的 rank 数", "the number of ranks of DualPipe p=2 folded"))
