import random

from course.checks import assert_equal, assert_not_using, assert_raises, fresh_seed
from course.i18n import tr
from course.plan import Plan

from submission import p2p_hops, v_placement


def expected(p, v):
    ranks = [[] for _ in range(p)]
    for s in range(p * v):
        c, i = divmod(s, p)
        ranks[i if c % 2 == 0 else p - 1 - i].append(s)
    return ranks


def test_edge_cases():
    assert_equal(v_placement(1), [[0, 1]], "v_placement(1)")
    assert_equal(p2p_hops(v_placement(1)), 0, "p2p_hops(v_placement(1))",
                 tr("只有一个 rank 时没有跨 rank 的通信", "with one rank nothing crosses ranks"))
    assert_equal(v_placement(3, 1), [[0], [1], [2]], "v_placement(3, 1)")
    assert_equal(v_placement(2, 3), [[0, 3, 4], [1, 2, 5]], "v_placement(2, 3)")
    assert_equal(p2p_hops([[0]]), 0, "p2p_hops([[0]])")


def test_bad_arguments():
    for args in [(0,), (2, 0), (True,), (2.0,), (2, None)]:
        assert_raises(ValueError, v_placement, *args, what=f"v_placement{args}")
    for placement in [[[0], [2]], [[1], [2]], [[0, 0]], [[0], ["1"]]]:
        assert_raises(ValueError, p2p_hops, placement, what=f"p2p_hops({placement})")


def test_random_sizes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(40):
        p, v = rng.randint(1, 16), rng.randint(1, 6)
        placement = v_placement(p, v)
        assert_equal(placement, expected(p, v), f"v_placement({p}, {v}) (seed={seed})")
        hops = v * (p - 1)
        assert_equal(p2p_hops(placement), hops, f"p2p_hops(v_placement({p}, {v})) (seed={seed})")
        # the placement is one the course's plans accept: each stage on one rank
        assert_equal(sorted(Plan([[] for _ in range(p)], 1, placement).rank_of_stage()), list(range(p * v)),
                     tr(f"v_placement({p}, {v}) 里的 stage", f"the stages of v_placement({p}, {v})"))
        shuffled = [list(r) for r in placement]
        rng.shuffle(shuffled)
        assert_equal(p2p_hops(shuffled), hops, f"p2p_hops(ranks in another order) (seed={seed})",
                     tr("rank 的编号顺序不影响跨 rank 的次数",
                        "the order of the ranks does not change how often a step crosses ranks"))
    assert_not_using(v_placement, "course")
    assert_not_using(p2p_hops, "course")
