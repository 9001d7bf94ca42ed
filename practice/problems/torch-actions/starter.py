"""Exercise torch-actions (chapter 8): course Plans to torch.distributed.pipelining actions (with or without the
send and receive actions) and back."""

from course.plan import Overlap, ops_of


def to_actions(plan, comms=False):
    """Per rank, the plan's steps as torch action strings, e.g. "0F2", "1I0", "(0F3;1I1)OVERLAP_F_B", in the
    order of ``plan.ranks[r]``, stage = position along the route.  With ``comms``, each rank's list also holds
    the send and receive actions torch's runtime needs to run it as written, without a lowering of its own.
    Raises ValueError for an invalid plan.
    """
    raise NotImplementedError  # TODO: your code here


def from_actions(actions):
    """Per rank, torch action strings as course plan tokens (what ``Plan.parse`` reads: F0, B1.s4, W1.s4, F3&B1).

    Communication actions and None are dropped; anything else that is not a compute action raises ValueError.
    """
    raise NotImplementedError  # TODO: your code here
