"""course.claims: a guarded sentence fails when its data turn, a machine-dependent one picks its wording."""

import pytest

from course.claims import ClaimError, claim, reveal
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
