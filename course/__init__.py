"""Pipeline parallelism course library."""
