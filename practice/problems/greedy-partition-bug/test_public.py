import math

from course.checks import assert_not_using, assert_true
from course.i18n import tr
from course.partition import partition

from submission import empty_stage_case, fixed_partition


def test_the_seed_leaves_a_stage_empty():
    layers, p = empty_stage_case()
    assert_true(type(p) is int and type(layers) in (list, tuple) and 2 <= p <= len(layers) <= 64
                and all(type(t) in (int, float) and 0 < t < math.inf for t in layers),
                tr("empty_stage_case() 要返回 (layer_times, p)：正的有限层耗时，2 <= p <= len(layer_times) <= 64",
                   "empty_stage_case() must return (layer_times, p): positive finite layer times, "
                   "2 <= p <= len(layer_times) <= 64"))
    sizes = partition(list(layers), p, "greedy").sizes
    assert_true(0 in sizes, tr(f"种子的贪心在 empty_stage_case() 上每个 stage 都有层 (sizes {sizes})",
                               f"the seed's greedy gives every stage a layer on empty_stage_case() (sizes {sizes})")
                + tr("\n  提示 (hint): 最后一层比总量的 1/p 还重时，前面的 stage 会怎样？",
                     "\n  hint: what do the earlier stages do when the last layer alone outweighs 1/p of the total?"))


def test_fixed_partition_small_example():
    stages = fixed_partition([1, 2, 3, 4, 5], 2)
    assert_true(stages == [[0, 1, 2], [3, 4]],
                tr(f"fixed_partition([1, 2, 3, 4, 5], 2) 应该是 [[0, 1, 2], [3, 4]]（瓶颈 9），得到 {stages!r:.200}",
                   f"fixed_partition([1, 2, 3, 4, 5], 2) should be [[0, 1, 2], [3, 4]] (bottleneck 9), got "
                   f"{stages!r:.200}"))
    assert_not_using(fixed_partition, "course")
