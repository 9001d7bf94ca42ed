import torch  # noqa: F401  (imported before the learner's code)

from course.checks import assert_not_using, fresh_seed
from course.live_checks import check_pipeline_step

from submission import train_step


def test_fewer_microbatches_than_ranks():
    assert_not_using(train_step, "torch.distributed.pipelining", "course")
    check_pipeline_step(train_step, world_size=4, m=2, seed=fresh_seed())


def test_many_microbatches():
    check_pipeline_step(train_step, world_size=4, m=7, seed=fresh_seed())
