from course.checks import assert_equal, assert_not_using

from submission import zb_h1_order


def test_three_ranks_four_microbatches():
    expected = ["F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3", "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
                "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3"]
    for r in range(3):
        assert_equal(zb_h1_order(3, 4, r), expected[r].split(), f"zb_h1_order(3, 4, {r})")
    assert_not_using(zb_h1_order, "course")
