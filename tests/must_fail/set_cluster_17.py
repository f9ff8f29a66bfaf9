"""a cluster of 17 CTAs: a multicast mask addresses at most 16."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion

EXPECT = LaunchError, "set_cluster(17, 1, 1) asks for 17 CTAs per cluster; a multicast mask addresses at most 16 (16-bit ctaMask)"


def program() -> None:
    GemmFusion(M=8192, N=256, K=64, non_portable_cluster=True).set_cluster(17)
