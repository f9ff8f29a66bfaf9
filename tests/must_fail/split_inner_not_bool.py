"""split(..., inner="no"): a flag that is not a bool (a non-empty string was
taken as True, an inner split, before)."""

from __future__ import annotations

from tilec.errors import ScheduleError
from tilec.ir import GemmFusion

EXPECT = ScheduleError, "C: split: inner of axis 0 must be True (inner split) or False (outer split) but got 'no'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64, inner="no")
