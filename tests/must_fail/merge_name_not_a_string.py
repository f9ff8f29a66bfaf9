"""a merge name that is not a string."""

from __future__ import annotations

from tilec.errors import AxisNameError
from tilec.ir import GemmFusion

EXPECT = AxisNameError, "C: merge: the name of axes 0 and 1 must be an identifier (letters, digits and _, not starting with a digit) but got 3"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.merge(0, name=3)
