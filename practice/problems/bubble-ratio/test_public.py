from course.checks import assert_close, assert_not_using, assert_raises
from course.i18n import tr

from submission import bubble_from_spans, bubble_ratio


def test_spans_of_a_tiny_pipeline():
    # p=2, m=1, F=1, B=2: rank 0 runs F0 [0,1] and B0 [4,6]; rank 1 runs F0 [1,2] and B0 [2,4]
    spans = [[(0.0, 1.0), (4.0, 6.0)], [(1.0, 2.0), (2.0, 4.0)]]
    assert_close(bubble_from_spans(spans), 0.5, "bubble_from_spans(p=2, m=1)",
                 tr("空闲时间 / (p × makespan)", "idle time / (p × makespan)"))


def test_overlapping_spans_count_once():
    spans = [[(0.0, 2.0), (1.0, 3.0)], [(0.0, 1.0)]]
    assert_close(bubble_from_spans(spans), 1 / 3, "bubble_from_spans([[(0, 2), (1, 3)], [(0, 1)]])",
                 tr("rank 0 从 0 到 3 一直在忙：重叠的那一段只算一次",
                    "rank 0 is busy from 0 to 3: the overlap counts once"))


def test_closed_form_examples():
    assert_close(bubble_ratio(1, 7), 0.0, "bubble_ratio(1, 7)")
    assert_close(bubble_ratio(4, 8), 3 / 11, "bubble_ratio(4, 8)")
    assert_close(bubble_ratio(4, 8, 2), 3 / 19, "bubble_ratio(4, 8, 2)",
                 tr("interleaved 时一个 chunk 只有 1/v 那么长", "interleaved, each chunk is only 1/v as long"))
    assert_not_using(bubble_ratio, "course")


def test_bad_arguments():
    assert_raises(ValueError, bubble_ratio, 0, 4, what="bubble_ratio(0, 4)")
    assert_raises(ValueError, bubble_from_spans, [[(2.0, 1.0)]], what="bubble_from_spans([[(2, 1)]])")
