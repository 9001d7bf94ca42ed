from course.checks import assert_close, assert_not_using, assert_raises
from course.i18n import tr

from submission import attribute_idle


def test_a_perfect_two_rank_trace():
    # p=2, m=1, F=1 and B=2 on both stages, exactly as simulated: all idle is the schedule's own bubble
    plan = [["F0", "B0"], ["F0", "B0"]]
    spans = [[(0.0, 1.0), (4.0, 6.0)], [(1.0, 2.0), (2.0, 4.0)]]
    got = attribute_idle(plan, spans)
    assert_close(got[0]["idle"], 3.0, tr("rank 0 的空闲", "rank 0's idle time"))
    for key in ("stage", "microbatch", "overhead"):
        assert_close(got[0][key], 0.0, tr(f"rank 0 的 {key}", f"rank 0's {key}"),
                     tr("trace 和均衡的重放一模一样时，空闲全是调度的 bubble",
                        "when the trace is exactly its balanced replay, all idle time is the schedule's bubble"))
    assert_not_using(attribute_idle, "course.attribution")


def test_a_slow_second_stage_is_the_stages_doing():
    # 1F1B, p=2, m=2, every op of stage 1 twice as long as stage 0's (F 1 and 2, B 1 and 2), as simulated:
    # no micro-batch differs from another on its stage
    plan = [["F0", "F1", "B0", "B1"], ["F0", "B0", "F1", "B1"]]
    spans = [[(0, 1), (1, 2), (5, 6), (9, 10)], [(1, 3), (3, 5), (5, 7), (7, 9)]]
    got = attribute_idle(plan, [[(float(s), float(e)) for s, e in row] for row in spans])
    for r in range(2):
        assert_close(got[r]["microbatch"], 0.0, tr(f"rank {r} 的 microbatch", f"rank {r}'s microbatch"),
                     tr("同一个 stage 上每个 micro-batch 一样重：不均衡全来自 stage 之间",
                        "every micro-batch is as heavy as the next on each stage: all imbalance comes from the stages"))
    assert_close(got[0]["stage"] + got[0]["schedule"], got[0]["idle"], tr("rank 0 的 schedule + stage",
                 "rank 0's schedule + stage"), tr("这条 trace 就是它自己的重放，没有开销",
                                                  "this trace is its own replay: it has no overhead"))
    assert_close(got[0]["stage"], 3.0, tr("rank 0 的 stage", "rank 0's stage"),
                 tr("均衡时每个 F、B 都是 1.5，每个 rank 的 bubble 是 3；实测 rank 0 空了 6",
                    "balanced, every F and B takes 1.5 and each rank idles 3; measured, rank 0 idles 6"))


def test_wrong_number_of_spans():
    assert_raises(ValueError, attribute_idle, [["F0", "B0"]], [[(0.0, 1.0)]])
