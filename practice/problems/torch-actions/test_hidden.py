import contextlib
import io
import random

from torch.distributed.pipelining.schedules import _Action, _add_send_recv, _ComputationType, _simulate_comms_compute

from course.checks import CheckFailed, assert_equal, assert_not_using, assert_raises, fresh_seed
from course.i18n import tr
from course.plan import Plan, PlanError, ops_of
from course.schedules import REGISTRY, build
from course.torch_bridge import from_torch, torch_order

from submission import from_actions, to_actions

T = _ComputationType
COMMS = (T.SEND_F, T.RECV_F, T.SEND_B, T.RECV_B)


def parse_rows(got, plan, what):
    """The learner's strings read back by torch's own parser, per rank."""
    if type(got) is not list or len(got) != plan.p or not all(type(row) is list for row in got):
        raise CheckFailed(tr(f"{what}：要返回 {plan.p} 个 rank 的列表 (list)",
                             f"{what}: return a list of {plan.p} ranks"))
    out = []
    for r, row in enumerate(got):
        actions = []
        for k, text in enumerate(row):
            if type(text) is not str:
                raise CheckFailed(tr(f"{what}：rank {r} 第 {k} 个动作要是 str",
                                     f"{what}: rank {r}'s action {k} must be a str"))
            try:
                actions.append(_Action.from_str(text))
            except Exception as e:  # noqa: BLE001  (torch's parser, on the learner's text, can raise anything)
                raise CheckFailed(tr(f"{what}：torch 读不懂 rank {r} 的第 {k} 个动作 {text!r}: {e}",
                                     f"{what}: torch cannot read rank {r}'s action {k}, {text!r}: {e}")) from None
        out.append(actions)
    return out


def check_compute(plan, rows, what):
    """The compute actions, in order, are the plan's steps."""
    position = plan.chunk_of_stage()
    kinds = {"F": T.FORWARD, "W": T.BACKWARD_WEIGHT, "B": T.BACKWARD_INPUT if plan.split_backward else T.FULL_BACKWARD}
    for r, steps in enumerate(plan.ranks):
        compute = [a for a in rows[r] if a.computation_type not in COMMS]
        assert_equal(len(compute), len(steps), tr(f"{what}：rank {r} 的计算动作个数",
                                                  f"{what}: rank {r}'s number of compute actions"),
                     tr("一个 Overlap 步骤是一个 OVERLAP_F_B 动作", "one Overlap step is one OVERLAP_F_B action"))
        for k, (action, step) in enumerate(zip(compute, steps)):
            leaves = list(action.sub_actions) if action.computation_type == T.OVERLAP_F_B else [action]
            want = [(kinds[op.kind], position[op.stage], op.mb) for op in ops_of(step)]
            have = [(a.computation_type, a.stage_index, a.microbatch_index) for a in leaves]
            if have != want:
                raise CheckFailed(tr(f"{what}：rank {r} 第 {k} 个计算动作 {action} 表示 {have}，而 plan 的 {step} "
                                     f"应该是 {want}",
                                     f"{what}: rank {r}'s compute action {k}, {action}, means {have}; the plan's "
                                     f"{step} is {want}"))


def flat(actions):
    return [leaf for a in actions for leaf in (a.sub_actions if a.computation_type == T.OVERLAP_F_B else (a,))]


def check_comms(plan, rows, what):
    """The sends and receives are exactly those torch's own lowering adds, each on the right side of its compute
    action, and torch's dry run of the whole schedule completes."""
    position, rank_of = plan.chunk_of_stage(), plan.rank_of_stage()
    stage_rank = {position[s]: r for s, r in rank_of.items()}
    compute = {r: [a for a in row if a.computation_type not in COMMS] for r, row in enumerate(rows)}
    wanted = _add_send_recv({r: list(a) for r, a in compute.items()}, stage_rank.__getitem__, len(position))
    for r, row in enumerate(rows):
        have = sorted(str(a) for a in row if a.computation_type in COMMS)
        want = sorted(str(a) for a in wanted[r] if a.computation_type in COMMS)
        if have != want:
            extra, missing = sorted(set(have) - set(want)), sorted(set(want) - set(have))
            raise CheckFailed(tr(f"{what}：rank {r} 的收发动作不对：多了 {extra[:4]}，少了 {missing[:4]}"
                                 f"（一共应该有 {len(want)} 个，你有 {len(have)} 个）",
                                 f"{what}: rank {r}'s sends and receives are wrong: extra {extra[:4]}, missing "
                                 f"{missing[:4]} ({len(want)} expected, {len(have)} given)"))
        leaves = flat(row)
        where = {(a.computation_type, a.stage_index, a.microbatch_index): i for i, a in enumerate(leaves)}
        for i, a in enumerate(leaves):
            if a.computation_type not in COMMS:
                continue
            owners = ([T.FORWARD] if a.computation_type in (T.SEND_F, T.RECV_F)
                      else [T.BACKWARD_INPUT, T.FULL_BACKWARD])
            j = next((where[(c, a.stage_index, a.microbatch_index)] for c in owners
                      if (c, a.stage_index, a.microbatch_index) in where), None)
            before = a.computation_type in (T.RECV_F, T.RECV_B)
            if j is None or (before and i > j) or (not before and i < j):
                raise CheckFailed(tr(f"{what}：rank {r} 的 {a} 放错了地方："
                                     f"{'接收要在用到它的计算之前' if before else '发送要在算出它的计算之后'}",
                                     f"{what}: rank {r}'s {a} is misplaced: "
                                     + ("a receive goes before the compute that uses it" if before else
                                        "a send goes after the compute that makes it")))
    order = {r: flat(row) for r, row in enumerate(rows)}
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            _simulate_comms_compute(order, stage_rank.__getitem__, len(position))
    except Exception as e:  # noqa: BLE001  (torch's dry run of the learner's order can fail anywhere)
        raise CheckFailed(tr(f"{what}：torch 的演练（_simulate_comms_compute）走不完，这个顺序会 hang：{e!r}",
                             f"{what}: torch's dry run (_simulate_comms_compute) does not finish, so this order can "
                             f"hang: {e!r}")) from None


def random_plans(rng):
    for name, info in sorted(REGISTRY.items()):
        if name == "dualpipe":
            continue      # two opposite routes: no torch form
        for _ in range(3):
            p = rng.randint(1, 4) * (2 if name.startswith("dualpipe") else 1)
            m = p * rng.randint(1, 3) * 2
            params = {"v": rng.randint(1, 3)} if "v" in info.params else {}
            try:
                yield name, p, m, params, build(name, p, m, **params)
            except ValueError:
                continue


def test_every_schedule_parses_in_torch():
    seed = fresh_seed()
    for name, p, m, params, plan in random_plans(random.Random(seed)):
        what = f"to_actions({name} p={p} m={m} {params}) (seed={seed})"
        check_compute(plan, parse_rows(to_actions(plan), plan, what), what)
    assert_not_using(to_actions, "course.torch_bridge")


def test_sends_and_receives_are_torchs_own():
    seed = fresh_seed()
    for name, p, m, params, plan in random_plans(random.Random(seed)):
        what = f"to_actions({name} p={p} m={m} {params}, comms=True) (seed={seed})"
        rows = parse_rows(to_actions(plan, comms=True), plan, what)
        check_compute(plan, rows, what)
        check_comms(plan, rows, what)
    assert_not_using(to_actions, "course.torch_bridge")


def parsed(tokens, m, what):
    if type(tokens) is not list or not all(type(row) is list and all(type(t) is str for t in row) for row in tokens):
        raise CheckFailed(tr(f"{what}：要返回每个 rank 一个 token 字符串列表",
                             f"{what}: return one list of token strings per rank"))
    try:
        return Plan.parse("\n".join(" ".join(row) for row in tokens), m)
    except PlanError as e:
        raise CheckFailed(tr(f"{what}：Plan.parse 读不了你的 token：{e}",
                             f"{what}: Plan.parse cannot read your tokens: {e}")) from None


def test_torch_schedules_come_back():
    for cls, p, m, v in [("Schedule1F1B", 4, 8, 1), ("ScheduleInterleaved1F1B", 2, 4, 2),
                         ("ScheduleZBVZeroBubble", 2, 4, 2), ("ScheduleDualPipeV", 2, 6, 2),
                         ("ScheduleInterleavedZeroBubble", 2, 4, 2)]:
        order = torch_order(cls, p, m, v, comms=True)
        rows = [[str(a) if a is not None else None for a in order[r]] for r in sorted(order)]
        mine = parsed(from_actions(rows), m, f"from_actions({cls})")
        want = from_torch(order, m)
        for r in range(p):
            assert_equal(mine.rank_tokens(r), want.rank_tokens(r), f"from_actions({cls} p={p} m={m}) rank {r}",
                         tr("torch 的完整 backward B 在一个拆开了 I/W 的 schedule 里要怎么写？通信动作要丢掉",
                            "how does torch's full backward B read in a schedule that splits I and W? Drop the "
                            "communication"))
    assert_not_using(from_actions, "course.torch_bridge")


def test_round_trip():
    for name, p, m, params in [("1f1b", 3, 6, {}), ("zb-h1", 3, 6, {}), ("interleaved", 2, 4, {"v": 2}),
                               ("zbv", 2, 4, {}), ("dualpipev", 2, 4, {})]:
        plan = build(name, p, m, **params)     # one route through stages 0..S-1: positions are stage numbers
        for comms in (False, True):
            back = parsed(from_actions(to_actions(plan, comms=comms)), m,
                          f"from_actions(to_actions({name}, comms={comms}))")
            for r in range(p):
                assert_equal(back.rank_tokens(r), plan.rank_tokens(r),
                             tr(f"{name}（comms={comms}）：rank {r} 来回转一圈以后",
                                f"{name} (comms={comms}): rank {r} after the round trip"))


def test_bad_actions():
    assert_raises(ValueError, from_actions, [["0X0"]], what="from_actions([['0X0']])")
    assert_raises(ValueError, to_actions, Plan.parse("F0 B0 F0\nF0 B0"),
                  what=tr("to_actions(一个 op 出现两次的 plan)", "to_actions(a plan with an op given twice)"))
