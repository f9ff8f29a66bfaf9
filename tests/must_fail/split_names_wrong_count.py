"""split names of the wrong count: one name where a split makes two axes."""

from __future__ import annotations

from tilec.errors import AxisNameError
from tilec.ir import GemmFusion

EXPECT = AxisNameError, "C: split: names of axis 0 must be two strings (outer, inner) but got ('Mo',)"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64, names=("Mo",))
