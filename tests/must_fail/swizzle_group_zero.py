"""a swizzle group of zero."""

from __future__ import annotations

from tilec.errors import SplitFactorError
from tilec.ir import GemmFusion

EXPECT = SplitFactorError, "C: swizzle group of axis 0 must be a positive integer but got 0"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64).split(2, 64).swizzle(0, 2, 0)
