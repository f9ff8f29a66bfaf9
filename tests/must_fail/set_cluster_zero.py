"""a cluster dim of zero."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion

EXPECT = LaunchError, "cluster dim x must be a positive integer but got 0"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.set_cluster(0)
