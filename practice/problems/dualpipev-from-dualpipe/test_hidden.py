from course.checks import CheckFailed, assert_equal, assert_not_using, assert_raises
from course.i18n import tr
from course.plan import Plan, PlanError
from course.schedules import build
from course.sim import simulate

from submission import dualpipev_from_dualpipe


def tokens(plan):
    return [[str(st) for st in steps] for steps in plan.ranks]


def check(p, m):
    got = dualpipev_from_dualpipe(tokens(build("dualpipe", 2 * p, 2 * m)))
    want = tokens(build("dualpipev", p, m))
    what = f"dualpipev_from_dualpipe(dualpipe P={2 * p}, {2 * m} micro-batches)"
    if type(got) is not list or len(got) != p or \
            not all(type(row) is list and all(type(t) is str for t in row) for row in got):
        raise CheckFailed(tr(f"{what}：要返回 {p} 个 rank，每个 rank 一个 token 字符串列表",
                             f"{what}: return {p} ranks, each a list of token strings"))
    placement = [[r, 2 * p - 1 - r] for r in range(p)]
    try:
        plan = Plan.parse("\n".join(" ".join(row) for row in got), m, placement=placement)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}：Plan.parse 读不了你的 token：{e}",
                             f"{what}: Plan.parse cannot read your tokens: {e}")) from None
    for r in range(p):
        assert_equal(tokens(plan)[r], want[r], f"{what} rank {r}",
                     tr("要哪一半 rank？路线 B 的 stage 2P-1-r 在 V 里是哪个 stage？"
                        "它的 micro-batch 从几开始编号？",
                        "Which half of the ranks? Which stage of the V is route B's stage 2P-1-r? "
                        "From which number do its micro-batches count?"))
    try:
        simulate(plan)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}：不是合法的 plan，或者会死锁：{e}",
                             f"{what}: not a valid plan, or it deadlocks: {e}")) from None


def test_small_and_textbook_sizes():
    for p, m in [(1, 2), (2, 4), (4, 8), (4, 10), (3, 6), (8, 16)]:
        check(p, m)
    assert_not_using(dualpipev_from_dualpipe, "course.schedules")


def test_odd_rank_count():
    assert_raises(ValueError, dualpipev_from_dualpipe, [["F0"], ["F0"], ["F0"]],
                  what=tr("3 个 rank 的输入", "an input of 3 ranks"))
