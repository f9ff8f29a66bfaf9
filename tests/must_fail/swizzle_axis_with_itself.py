"""a swizzle of an axis with itself (1 and -2 are the same axis)."""

from __future__ import annotations

from tilec.errors import AxisError
from tilec.ir import GemmFusion

EXPECT = AxisError, "C: swizzle needs two different axes but got 1 twice"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.swizzle(1, -2, 4)
