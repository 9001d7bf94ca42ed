"""The plan IR: string form, parsing, validation errors that name the first violation."""

import pytest

from course.plan import Op, Overlap, Plan, PlanError, parse_op, parse_step
from course.schedules import build


def test_op_tokens():
    assert str(parse_op("F3", 0)) == "F3.s0"
    assert parse_op("B0.s5") == Op("B", 0, 5)
    assert parse_op("I2", 1) == Op("B", 2, 1)          # torch's name for the input gradient
    assert parse_step("F3&B1", 2) == Overlap(Op("F", 3, 2), Op("B", 1, 2))
    with pytest.raises(PlanError, match="expected KIND MB"):
        parse_op("X3", 0)
    with pytest.raises(PlanError, match="needs a stage annotation"):
        parse_op("F3")


@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(1, 1), (4, 8), (3, 2), (5, 16)])
def test_format_parse_round_trip(name, p, m):
    plan = build(name, p, m).validate()
    again = Plan.parse(plan.format())
    assert again.ranks == plan.ranks and again.placement == plan.placement and again.m == m
    assert again.format() == plan.format()


def test_annotated_round_trip_with_several_stages_per_rank():
    text = "F0.s0 F0.s2 B0.s2 B0.s0\nF0.s1 F0.s3 B0.s3 B0.s1"
    plan = Plan.parse(text, placement=[[0, 2], [1, 3]]).validate()
    assert plan.num_stages == 4 and plan.chunks == 4
    assert plan.format() == text


def test_split_backward_is_read_from_the_presence_of_w():
    full = Plan.parse("F0 B0")
    split = Plan.parse("F0 B0 W0")
    assert not full.split_backward and split.split_backward
    assert Plan.parse("F0 F1&W0 B1").split_backward and Plan.parse("F0 F1 B0&W1 B1 W0").split_backward
    assert not Plan.parse("F0 F1&B0 B1").split_backward
    assert [str(o) for o in full.required_ops()] == ["F0.s0", "B0.s0"]
    assert len(split.required_ops()) == 3


@pytest.mark.parametrize("text,message", [
    ("F0 F1 B0\nF0 F1 B0 B1", "missing op B1.s0: rank 0 never runs it"),
    ("F0 F0 B0\nF0 B0", "duplicate op F0.s0: rank 0 runs it at steps 0 and 1"),
    ("F0 B0 W0\nF0 W0 B0", "rank 1 step 1: W0.s1 comes before its own B0.s1"),
    ("F0 B0\nB0 F0", "rank 1 step 0: B0.s1 comes before its own F0.s1"),
])
def test_validation_names_the_first_violation(text, message):
    with pytest.raises(PlanError) as err:
        Plan.parse(text).validate()
    assert message in str(err.value)


def test_validation_of_unknown_stages():
    with pytest.raises(PlanError, match=r"rank 1 step 2: F0.s7 names unknown stage 7 \(known: \[0, 1\]\)"):
        Plan.parse("F0 B0\nF0 B0 F0.s7", placement=[[0], [1]]).validate()
    # without a placement the annotation implies the rank holds stage 7, so stages 2..6 are missing
    with pytest.raises(PlanError, match="route names stage 2, which no rank holds"):
        Plan.parse("F0 B0\nF0 B0 F0.s7").validate()


def test_validation_of_placement_and_ranges():
    with pytest.raises(PlanError, match="stage 0 is placed on ranks 0 and 1"):
        Plan([[Op("F", 0, 0)], []], 1, placement=[[0], [0]]).validate()
    with pytest.raises(PlanError, match="runs on rank 1 but stage 0 is placed on rank 0"):
        Plan([[Op("F", 0, 0), Op("B", 0, 0)], [Op("F", 0, 0)]], 1).validate()
    with pytest.raises(PlanError, match="names micro-batch 3, allowed 0..1"):
        Plan.parse("F0 F1 B0 B1 F3", num_microbatches=2).validate()
    with pytest.raises(PlanError, match="at least one micro-batch"):
        Plan([[]], 0).validate()


def test_parse_rejects_garbage_with_the_rank():
    with pytest.raises(PlanError, match=r"rank 1: bad op 'F-1'"):
        Plan.parse("F0 B0\nF-1")
    with pytest.raises(PlanError, match="empty plan"):
        Plan.parse("# nothing\n\n")


def test_dependencies_follow_routes():
    plan = Plan.parse("F0 B0\nF0 B0\nF0 B0")
    assert plan.dependencies(Op("F", 0, 1)) == [Op("F", 0, 0)]
    assert plan.dependencies(Op("B", 0, 1)) == [Op("F", 0, 1), Op("B", 0, 2)]
    assert plan.dependencies(Op("B", 0, 2)) == [Op("F", 0, 2)]
    assert plan.dependencies(Op("W", 0, 2)) == [Op("B", 0, 2)]
    # a second route runs the stages in the opposite direction (DualPipe's other end)
    rev = Plan([[Op("F", 0, 0), Op("B", 0, 0)], [Op("F", 0, 1), Op("B", 0, 1)]], 1,
               placement=[[0], [1]], routes=[[1, 0]])
    assert rev.dependencies(Op("F", 0, 0)) == [Op("F", 0, 1)]


def test_a_plan_is_an_immutable_value():
    import dataclasses
    import pickle

    plan = Plan([[Op("F", 0, 0), Op("B", 0, 0)], [Op("F", 0, 1), Op("B", 0, 1)]], 1, placement=[[0], [1]])
    assert plan.ranks == ((Op("F", 0, 0), Op("B", 0, 0)), (Op("F", 0, 1), Op("B", 0, 1)))
    assert plan.placement == ((0,), (1,)) and plan.routes == ((0, 1),)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.ranks = ()
    with pytest.raises(TypeError):
        plan.rank_of_stage()[0] = 1                    # derived facts are read-only too
    assert plan == Plan.parse("F0 B0\nF0 B0") and hash(plan) == hash(Plan.parse("F0 B0\nF0 B0"))
    assert plan.chunk_of_stage() == {0: 0, 1: 1} and plan.num_stages == 2 and not plan.split_backward
    again = pickle.loads(pickle.dumps(plan))           # the live runtime pickles plans into its jobs
    assert again == plan and again.rank_of_stage() == {0: 0, 1: 1}


def test_validation_names_a_stage_off_the_route_and_a_step_that_is_not_an_op():
    two_routes = Plan([[Op("F", 0, 0), Op("B", 0, 0), Op("F", 1, 0), Op("B", 1, 0)], [Op("F", 1, 1), Op("B", 1, 1)]],
                      2, placement=[[0], [1]], routes=[[0, 1], [0]])
    with pytest.raises(PlanError, match=r"rank 1 step 0: F1.s1: micro-batch 1 does not pass stage 1"):
        two_routes.validate()
    with pytest.raises(PlanError, match=r"rank 0 step 1: 'B0' is not an Op or an Overlap of two Ops"):
        Plan([[Op("F", 0, 0), "B0"]], 1).validate()
