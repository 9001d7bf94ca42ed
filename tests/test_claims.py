"""course.claims: a guarded sentence fails when its data turn, a machine-dependent one picks its wording."""

import pytest

from course.claims import ClaimError, claim, reveal


def test_claim_returns_the_sentence_when_it_holds():
    assert claim(3 > 2, "three beats two") == "three beats two"


def test_claim_fails_with_the_sentence_and_the_figures():
    with pytest.raises(ClaimError, match=r"always on rank 0.*rank=2"):
        claim(False, "always on rank 0", rank=2)


def test_claim_picks_the_other_wording_for_measurements():
    assert claim(False, "faster here", otherwise="slower here") == "slower here"


def test_reveal_compares_numbers_lists_and_words():
    assert "对了" in reveal(10, 10.2)
    assert "对了" not in reveal(3, 10)
    assert "没有填" in reveal(None, [1, 2])
    assert "对了" in reveal([4, 3], [4.0, 3.0])
    assert "对了" in reveal("Rank 0", "rank 0")
    assert reveal(1, 1, "因为如此。").endswith("）。因为如此。")
