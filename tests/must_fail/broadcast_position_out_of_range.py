"""a broadcast inserted past the end of the loop domain."""

from __future__ import annotations

from tilec.errors import AxisError
from tilec.ir import GemmFusion

EXPECT = AxisError, "C: broadcast position 5 is out of range (valid: -4..3)"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.broadcast(5)
