"""split of an axis past the end of the loop domain."""

from __future__ import annotations

from tilec.errors import AxisError
from tilec.ir import GemmFusion

EXPECT = AxisError, "C: axis 3 is out of range for a loop domain of 3 axes (valid: -3..2); loop domain is [iS.M{256}, iS.N{128}, rS.K{64}]"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(3, 32)
