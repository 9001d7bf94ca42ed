"""Exercise torch-actions (chapter 8): a course Plan as torch.distributed.pipelining action strings."""

from course.plan import Overlap


def to_actions(plan):
    """Per rank, the plan's steps as torch action strings "{stage}{kind}{microbatch}", e.g. "0F2", "1I0".

    F -> "F"; in a plan with W ops B is the input gradient -> "I" and W -> "W"; in a plan without W ops B is the
    full backward -> "B".  An overlapped pair F&B becomes its two actions in order.  The plan is validated
    first: a malformed plan raises ValueError (course.plan.PlanError).
    """
    ### BEGIN SOLUTION
    plan.validate()
    backward = "I" if plan.split_backward else "B"
    letter = {"F": "F", "B": backward, "W": "W"}
    out = []
    for steps in plan.ranks:
        actions = []
        for step in steps:
            for op in (step.first, step.second) if isinstance(step, Overlap) else (step,):
                actions.append(f"{op.stage}{letter[op.kind]}{op.mb}")
        out.append(actions)
    return out
    ### END SOLUTION
