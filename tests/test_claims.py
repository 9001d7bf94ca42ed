"""course.claims: a guarded sentence fails when its data turn, a machine-dependent one picks its wording."""

import pytest

from course.claims import ClaimError, bootstrap, claim, reveal, sweep
from course.i18n import set_language


def test_claim_returns_the_sentence_when_it_holds():
    assert claim(3 > 2, "three beats two") == "three beats two"


def test_claim_fails_with_the_sentence_and_the_figures():
    with pytest.raises(ClaimError, match=r"always on rank 0.*rank=2"):
        claim(False, "always on rank 0", rank=2)


def test_claim_picks_the_other_wording_for_measurements():
    assert claim(False, "faster here", otherwise="slower here") == "slower here"


@pytest.fixture
def zh():
    set_language("zh")
    yield
    set_language(None)


def test_reveal_compares_numbers_lists_and_words(zh):
    assert "对了" in reveal(10, 10.2)
    assert "对了" not in reveal(3, 10)
    assert "没有填" in reveal(None, [1, 2])
    assert "对了" in reveal([4, 3], [4.0, 3.0])
    assert "对了" in reveal("Rank 0", "rank 0")
    assert reveal(1, 1, "因为如此。").endswith("）。因为如此。")


def test_reveal_speaks_the_language_of_the_edition():
    try:
        set_language("en")
        assert reveal(10, 10.2).startswith("Your prediction **10** is right")
        assert reveal(None, 3).startswith("You left the prediction empty")
        assert reveal(3, 10, "Because.").endswith("the answer is **10**. Because.")
    finally:
        set_language(None)


def test_sweep_finds_where_a_rule_drawn_from_few_rows_breaks():
    """'B > W' looks like the rule on rows with F = 1; over a range of F it breaks, and the sweep names a point."""
    true_rule = sweep(lambda f, b, w: (b > min(f, w)) == (b > min(f, w)), {"f": (0.5, 2.0), "b": (0.5, 2.0),
                                                                           "w": (0.5, 2.0)}, n=200)
    assert true_rule.holds and true_rule.checked == 200 + 8
    wrong = sweep(lambda f, b, w: (b > w) == (b > min(f, w)), {"f": (0.5, 2.0), "b": (0.5, 2.0), "w": (0.5, 2.0)},
                  n=200, seed=3)
    assert not wrong.holds
    bad = wrong.figures()
    assert bad["broken"] == len(wrong.counterexamples)
    assert not (bad["b"] > bad["w"]) == (bad["b"] > min(bad["f"], bad["w"]))
    with pytest.raises(ClaimError, match="broken="):
        claim(wrong.holds, "the rule holds", **wrong.figures())
    ints = sweep(lambda p, m: isinstance(p, int) and 2 <= p <= 8 and m in (1, 4), {"p": (2, 8), "m": [1, 4]}, n=50)
    assert ints.holds


def test_bootstrap_interval_covers_the_statistic_and_shrinks_with_more_data():
    import statistics

    few = [float(x % 7) for x in range(20)]
    many = few * 20
    lo, hi = bootstrap(few, statistics.median, seed=1)
    assert lo <= statistics.median(few) <= hi
    lo2, hi2 = bootstrap(many, statistics.mean, seed=1)
    assert hi2 - lo2 < hi - lo or (hi - lo) == 0
    assert bootstrap([5.0], statistics.mean) == (5.0, 5.0)
    with pytest.raises(ValueError):
        bootstrap([], statistics.mean)
