from course.checks import assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import partition


def test_small_example():
    assert_equal(partition([1, 2, 3, 4, 5], 2), [3, 2], "partition([1, 2, 3, 4, 5], 2)")
    assert_equal(partition([4, 1, 1, 1, 1], 5), [1, 1, 1, 1, 1],
                 tr("partition(每层一个 stage)", "partition(one layer per stage)"))
    assert_not_using(partition, "course")


def test_rejects_too_many_stages():
    assert_raises(ValueError, partition, [1, 2], 3,
                  hint=tr("每个 stage 至少一层：p <= len(costs)", "every stage needs a layer: p <= len(costs)"))
