"""tilec: masks of a schedule that launches no cluster."""

from __future__ import annotations

from tilec.errors import LaunchError

EXPECT = LaunchError, "gemm_basic.py: the schedule launches no cluster (cluster of 1 CTA): there is nothing to multicast; bind CIDx/RankX or call fusion.set_cluster()"
ARGV = ["masks", "{examples}/gemm_basic.py"]
