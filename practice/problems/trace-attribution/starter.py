"""Exercise trace-attribution (chapter 8): a trace's idle split into schedule bubble, imbalance and overhead."""

from collections import defaultdict

from course.plan import Overlap, Plan
from course.replay import replay


def attribute_idle(plan, spans):
    """Per rank {"idle", "schedule", "imbalance", "overhead"} of a measured trace of ``plan`` (tokens per rank)."""
    raise NotImplementedError  # TODO: your code here
