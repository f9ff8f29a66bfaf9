"""a cluster of 16 CTAs without non_portable_cluster."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion

EXPECT = LaunchError, "set_cluster(4, 4, 1) asks for 16 CTAs per cluster; the portable limit is 8: pass non_portable_cluster=True to GemmFusion to allow up to 16"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.set_cluster(4, 4)
