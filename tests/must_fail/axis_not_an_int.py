"""an axis position given as a string."""

from __future__ import annotations

from tilec.errors import AxisError
from tilec.ir import GemmFusion

EXPECT = AxisError, "C: axis must be an int but got '0'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split("0", 32)
