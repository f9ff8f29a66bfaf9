"""a split name that is not an identifier (it becomes a loop symbol)."""

from __future__ import annotations

from tilec.errors import AxisNameError
from tilec.ir import GemmFusion

EXPECT = AxisNameError, "C: split: each name of axis 0 must be an identifier (letters, digits and _, not starting with a digit) but got 'M o'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64, names=("M o", "Mi"))
