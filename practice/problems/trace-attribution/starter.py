"""Exercise trace-attribution (chapter 8): a trace's idle time split into the schedule's bubble, the stages'
imbalance, the micro-batches' imbalance, and communication and overhead."""

from collections import defaultdict

from course.plan import Overlap, Plan, ops_of
from course.replay import replay


def attribute_idle(plan, spans):
    """Per rank {"idle", "schedule", "stage", "microbatch", "overhead"} of a measured trace of ``plan``.

    ``plan``: each rank's op tokens (what ``Plan.parse`` reads); ``spans[r]``: rank r's measured (start, end) of
    each step, in the plan's order.  Raises ValueError when the spans do not match the plan's steps.
    """
    raise NotImplementedError  # TODO: your code here
