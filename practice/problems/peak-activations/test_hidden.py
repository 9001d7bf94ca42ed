import random

from course.checks import assert_equal, assert_not_using, fresh_seed
from course.plan import Plan
from course.schedules import build
from course.timeline import Span, Timeline

from submission import peak_activations


def expected(ranks):
    """The library's memory rule applied to the ops in order (one time unit each)."""
    plan = Plan.parse("\n".join(" ".join(r) for r in ranks))
    spans = [[Span(r, t, t + 1, op) for t, op in enumerate(plan.ranks[r])] for r in range(plan.p)]
    return [int(x) for x in Timeline.from_spans(plan, spans).peak_activations]


def test_one_f_one_b_peaks():
    for p, m in [(4, 8), (6, 2), (1, 3), (5, 1)]:
        ranks = [build("1f1b", p, m).rank_tokens(s) for s in range(p)]
        assert_equal(peak_activations(ranks), [min(p - s, m) for s in range(p)], f"peak_activations(1F1B p={p} m={m})")


def test_split_backward_orders():
    ranks = [["F0", "F1", "B0", "W0", "B1", "W1"], ["F0", "B0", "F1", "B1", "W0", "W1"]]
    assert_equal(peak_activations(ranks), [2, 2], "peak_activations(B/W split)")
    ranks = [["F0", "B0", "W0", "F1", "B1", "W1"]]
    assert_equal(peak_activations(ranks), [1], "peak_activations([[F0 B0 W0 F1 B1 W1]])")


def test_random_orders():
    seed = fresh_seed()
    rng = random.Random(seed)
    for case in range(100):
        p, m, split = rng.randint(1, 5), rng.randint(1, 8), rng.random() < 0.5
        ranks = []
        for _ in range(p):
            pending = {i: ["F", "B", "W"] if split else ["F", "B"] for i in range(m)}
            order = []
            while pending:
                i = rng.choice(sorted(pending))
                order.append(f"{pending[i].pop(0)}{i}")
                if not pending[i]:
                    del pending[i]
            ranks.append(order)
        assert_equal(peak_activations(ranks), expected(ranks), f"peak_activations(case {case}, seed={seed}) "
                     f"ranks={ranks}")
    assert_not_using(peak_activations, "course")
