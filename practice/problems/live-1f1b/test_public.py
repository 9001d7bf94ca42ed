import torch  # noqa: F401  (imported before the learner's code)

from course.checks import assert_not_using
from course.live_checks import check_pipeline_step

from submission import train_step


def test_four_ranks_four_microbatches():
    assert_not_using(train_step, "torch.distributed.pipelining", "course")
    check_pipeline_step(train_step, world_size=4, m=4, seed=1234)
