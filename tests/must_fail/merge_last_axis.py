"""merge(i) of the last axis: there is no next axis to merge with."""

from __future__ import annotations

from tilec.errors import AxisError
from tilec.ir import GemmFusion

EXPECT = AxisError, "C: inner axis 3 is out of range for a loop domain of 3 axes (valid: -3..2)"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.merge(2)
