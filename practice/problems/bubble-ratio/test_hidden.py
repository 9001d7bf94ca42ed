import random

from course.checks import assert_close, assert_not_using, assert_raises, fresh_seed
from course.costs import Costs
from course.i18n import tr
from course.schedules import build
from course.sim import simulate

from submission import bubble_from_spans, bubble_ratio


def spans_of(tl):
    return [[(float(s), float(e)) for s, e in zip(tl.starts[r], tl.ends[r])] for r in range(tl.p)]


def test_spans_against_the_timeline():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(25):
        p = rng.randint(1, 6)
        name = rng.choice(["gpipe", "1f1b", "zb-h1", "zb-h2"])
        m = rng.randint(1, 3 * p)
        costs = Costs(f=[rng.uniform(0.5, 2) for _ in range(p)], b=rng.uniform(0.5, 2), w=rng.uniform(0.2, 1),
                      comm=rng.choice([0.0, 0.3]))
        tl = simulate(build(name, p, m), costs)
        assert_close(bubble_from_spans(spans_of(tl)), tl.bubble_ratio, f"{name} p={p} m={m} (seed={seed})",
                     rel=1e-7, abs_tol=1e-9)


def test_spans_edge_cases():
    assert_close(bubble_from_spans([]), 0.0, "bubble_from_spans([])")
    assert_close(bubble_from_spans([[], []]), 0.0, "bubble_from_spans([[], []])")
    assert_close(bubble_from_spans([[(0.0, 2.0)], []]), 0.5, tr("一个 rank 一直空闲", "one rank idle throughout"),
                 tr("空的 rank 也占 p × makespan 的面积", "an empty rank still takes its share of p × makespan"))
    assert_close(bubble_from_spans([[(5.0, 6.0)], [(6.0, 7.0)]]), 0.5, tr("时间不从 0 开始", "time not starting at 0"),
                 tr("makespan 从最早的开始算起", "the makespan starts at the earliest start"))
    assert_close(bubble_from_spans([[(0.0, 4.0), (1.0, 2.0)], [(0.0, 4.0)]]), 0.0,
                 "bubble_from_spans([[(0, 4), (1, 2)], [(0, 4)]])",
                 tr("一段完全落在另一段里面", "one interval lies entirely inside another"))


def union_length(intervals):
    total, covered = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > covered:
            total += end - max(start, covered)
            covered = end
    return total


def test_overlapping_spans():
    """Two streams on one rank (chapter 6's F&B overlap): a moment in two spans is busy once."""
    seed = fresh_seed()
    rng = random.Random(seed)
    for case in range(40):
        p = rng.randint(1, 5)
        spans = []
        for _ in range(p):
            rank = []
            for _ in range(rng.randint(0, 6)):
                start = round(rng.uniform(0, 10), 3)
                rank.append((start, round(start + rng.uniform(0, 3), 3)))
            spans.append(rank)
        times = [t for rank in spans for span in rank for t in span]
        if not times or max(times) == min(times):
            want = 0.0
        else:
            want = 1 - sum(union_length(rank) for rank in spans) / (p * (max(times) - min(times)))
        assert_close(bubble_from_spans(spans), want, f"bubble_from_spans(case {case}, seed={seed}) spans={spans}",
                     tr("同一个 rank 上重叠的时间只算一次忙", "time covered twice on one rank is busy once"),
                     rel=1e-7, abs_tol=1e-9)
    for bad in ([[(0.0, float("nan"))]], [[(-1.0, 1.0)]], [[("0", 1.0)]], [[(0.0, float("inf"))]]):
        assert_raises(ValueError, bubble_from_spans, bad, what=f"bubble_from_spans({bad!r})")


def test_closed_form_against_the_simulator():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(30):
        p, v = rng.randint(1, 8), rng.choice([1, 1, 2, 3, 4])
        m = p * rng.randint(1, 4) if v > 1 else rng.randint(1, 20)
        f = rng.uniform(0.5, 2.0)
        costs = Costs(f=f, b=f * rng.uniform(0.5, 2.5), w=0.0)
        name = rng.choice(["gpipe", "1f1b"]) if v == 1 else "interleaved"
        tl = simulate(build(name, p, m, v=v) if v > 1 else build(name, p, m), costs)
        assert_close(bubble_ratio(p, m, v), tl.bubble_ratio, f"bubble_ratio({p}, {m}, {v}) vs {name} (seed={seed})",
                     tr("量一量：空闲的是每个 rank 开头和结尾的哪几段？interleaved 时一个 chunk 只有 1/v 那么长",
                        "measure it: which stretches at the start and the end of each rank are idle? Interleaved, "
                        "a chunk is only 1/v as long"),
                     rel=1e-7, abs_tol=1e-9)
    assert_not_using(bubble_ratio, "course")


def test_bad_arguments():
    for args in [(0, 4), (4, 0), (4, 4, 0), (-1, 4), (True, 4), (4, True), (4, 4, False), (2.0, 4), (4, 2.5),
                 (4, 4, 1.0), ("4", 4), (None, 4)]:
        assert_raises(ValueError, bubble_ratio, *args, what=f"bubble_ratio{args}",
                      hint=tr("p、m、v 都必须是正整数，bool 和 float 都不算",
                              "p, m and v must be positive ints; a bool or a float is not"))
