"""Exercise torch-actions (chapter 8): course Plans to torch.distributed.pipelining actions and back."""

from course.plan import Overlap


def to_actions(plan):
    """Per rank, the plan's steps as torch action strings, e.g. "0F2", "1I0", "(0F3;1I1)OVERLAP_F_B".

    F -> F; in a plan with W ops, B is the input gradient -> I and W -> W; without W ops, B is torch's full
    backward B.  Stage = position along the route.  Raises ValueError for an invalid plan.
    """
    raise NotImplementedError  # TODO: your code here


def from_actions(actions):
    """Per rank, torch action strings as course plan tokens (F0, B1.s4, W1.s4, F3&B1).

    torch's I -> B, W -> W; its full backward B -> B when no action is split, else B followed by W (a course plan
    splits every backward or none).  Communication actions and None are dropped; others raise ValueError.
    """
    raise NotImplementedError  # TODO: your code here
