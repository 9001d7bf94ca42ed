from course.checks import assert_not_using, assert_raises, assert_true
from course.i18n import tr

from submission import choose_layout

TINY = {"layers": 4, "hidden": 256, "heads": 4, "kv_heads": 4, "ffn": 512, "vocab": 1000}


def test_a_tiny_model_on_two_gpus():
    for bandwidths in ((None, None), (300e9, 40e9)):
        got = choose_layout(TINY, 2, 80 * 10 ** 9, 8, 128, 400.0, *bandwidths)
        assert_true(type(got) is dict and got.get("tp", 0) * got.get("pp", 0) * got.get("dp", 0) == 2,
                    tr(f"choose_layout(TINY, 2 GPUs, bandwidths {bandwidths}) 返回了 {got!r}：tp × pp × dp 要等于 2",
                       f"choose_layout(TINY, 2 GPUs, bandwidths {bandwidths}) returned {got!r}: "
                       "tp × pp × dp must be 2"))
    assert_not_using(choose_layout, "course.cli", names=("fit_layouts", "candidate_layouts"))


def test_nothing_fits():
    assert_raises(ValueError, choose_layout, TINY, 2, 1000, 8, 128,
                  hint=tr("1000 字节放不下任何方案", "1000 bytes hold no layout"))
