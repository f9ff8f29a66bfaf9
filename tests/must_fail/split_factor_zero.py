"""a split factor of zero."""

from __future__ import annotations

from tilec.errors import SplitFactorError
from tilec.ir import GemmFusion

EXPECT = SplitFactorError, "C: split factor of axis 1 must be a positive integer but got 0"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(1, 0)
