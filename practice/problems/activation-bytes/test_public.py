from course.checks import assert_equal, assert_not_using, assert_raises
from course.i18n import tr

from submission import gpt_layer_bytes, llama_layer_bytes


def test_a_small_gpt_layer():
    # s=4, b=1, h=8, a=2, ffn 4h, 2-byte activations: sbh (34 + 5as/h) = 32 * (34 + 5) bytes
    assert_equal(gpt_layer_bytes(4, 1, 8, 2), 32 * 39, "gpt_layer_bytes(4, 1, 8, 2)")
    assert_not_using(gpt_layer_bytes, "course")
    assert_not_using(llama_layer_bytes, "course")


def test_a_narrow_fp32_gpt_layer():
    # the same layer with an MLP only h wide and 4-byte activations: 1632 bytes (the masks stay 1 byte each)
    assert_equal(gpt_layer_bytes(4, 1, 8, 2, ffn=8, dtype_bytes=4), 1632,
                 "gpt_layer_bytes(4, 1, 8, 2, ffn=8, dtype_bytes=4)",
                 tr("34 + 5as/h 只在 ffn = 4h、2 字节的元素时成立：哪些张量随 ffn 变，哪些随元素字节数变？",
                    "34 + 5as/h holds only for ffn = 4h and 2-byte elements: which tensors grow with ffn, which with "
                    "the element size?"))


def test_sequence_parallel_needs_tp():
    assert_raises(ValueError, gpt_layer_bytes, 4, 1, 8, 2, 1, True, hint=tr("SP 要求 t > 1", "SP needs t > 1"))
