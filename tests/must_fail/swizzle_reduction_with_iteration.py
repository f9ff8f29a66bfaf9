"""a swizzle of the reduction axis K with the iteration axis M: C's index would then
depend on K's loop."""

from __future__ import annotations

from tilec.errors import SwizzleError
from tilec.ir import GemmFusion

EXPECT = SwizzleError, "C: cannot swizzle reduction axis rS.K{64} (position 2) with iteration axis iS.M{256} (position 0): the iteration axis's index would depend on the reduction loop"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.swizzle(0, 2, 2)
