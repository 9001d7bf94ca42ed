from course.checks import assert_equal, assert_not_using, assert_raises

from submission import gpt_layer_bytes, llama_layer_bytes


def test_a_small_gpt_layer():
    # s=4, b=1, h=8, a=2: sbh (34 + 5as/h) = 32 * (34 + 5) bytes
    assert_equal(gpt_layer_bytes(4, 1, 8, 2), 32 * 39, "gpt_layer_bytes(4, 1, 8, 2)")
    assert_not_using(gpt_layer_bytes, "course")
    assert_not_using(llama_layer_bytes, "course")


def test_sequence_parallel_needs_tp():
    assert_raises(ValueError, gpt_layer_bytes, 4, 1, 8, 2, 1, True, hint="SP 要求 t > 1")
