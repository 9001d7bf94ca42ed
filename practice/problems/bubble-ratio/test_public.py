from course.checks import assert_close, assert_not_using, assert_raises

from submission import bubble_from_spans, bubble_ratio


def test_spans_of_a_tiny_pipeline():
    # p=2, m=1, F=1, B=2: rank 0 runs F0 [0,1] and B0 [4,6]; rank 1 runs F0 [1,2] and B0 [2,4]
    spans = [[(0.0, 1.0), (4.0, 6.0)], [(1.0, 2.0), (2.0, 4.0)]]
    assert_close(bubble_from_spans(spans), 0.5, "bubble_from_spans(p=2, m=1)", "空闲时间 / (p × makespan)")


def test_closed_form_examples():
    assert_close(bubble_ratio(1, 7), 0.0, "bubble_ratio(1, 7)")
    assert_close(bubble_ratio(4, 8), 3 / 11, "bubble_ratio(4, 8)")
    assert_not_using(bubble_ratio, "course")


def test_bad_arguments():
    assert_raises(ValueError, bubble_ratio, 0, 4, what="bubble_ratio(0, 4)")
    assert_raises(ValueError, bubble_from_spans, [[(2.0, 1.0)]], what="bubble_from_spans([[(2, 1)]])")
