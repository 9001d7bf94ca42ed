"""Exercise torch-actions (chapter 8): a course Plan as torch.distributed.pipelining action strings."""

from course.plan import Overlap


def to_actions(plan):
    """Per rank, the plan's steps as torch action strings "{stage}{kind}{microbatch}", e.g. "0F2", "1I0".

    F -> "F"; in a plan with W ops B is the input gradient -> "I" and W -> "W"; in a plan without W ops B is the
    full backward -> "B".  An overlapped pair F&B becomes its two actions in order.  The plan is validated
    first: a malformed plan raises ValueError (course.plan.PlanError).
    """
    raise NotImplementedError  # TODO: your code here
