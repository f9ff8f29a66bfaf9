"""a split factor of True (a bool is not a tile size)."""

from __future__ import annotations

from tilec.errors import SplitFactorError
from tilec.ir import GemmFusion

EXPECT = SplitFactorError, "C: split factor of axis 1 must be a positive integer but got True"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(1, True)
