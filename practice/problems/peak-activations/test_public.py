from course.checks import assert_equal, assert_not_using
from course.i18n import tr

from submission import peak_activations


def test_gpipe_and_one_f_one_b():
    assert_equal(peak_activations([["F0", "F1", "B0", "B1"], ["F0", "B0", "F1", "B1"]]), [2, 1],
                 "peak_activations([[F0 F1 B0 B1], [F0 B0 F1 B1]])")
    gpipe = [[f"F{i}" for i in range(4)] + [f"B{i}" for i in range(4)]] * 3
    assert_equal(peak_activations(gpipe), [4, 4, 4], "peak_activations(GPipe p=3 m=4)",
                 tr("GPipe 每个 stage 保存 m 份", "every GPipe stage stores m micro-batches"))
    assert_not_using(peak_activations, "course")


def test_weight_gradient_releases():
    assert_equal(peak_activations([["F0", "B0", "F1", "B1", "W0", "W1"]]), [2],
                 "peak_activations([[F0 B0 F1 B1 W0 W1]])",
                 tr("有 W 时，要等 W 做完才释放激活", "with W ops, activations are freed only when W is done"))
