"""a broadcast of negative extent."""

from __future__ import annotations

from tilec.errors import SplitFactorError
from tilec.ir import GemmFusion

EXPECT = SplitFactorError, "C: broadcast extent of axis 0 must be a positive integer but got -3"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.broadcast(0, -3)
