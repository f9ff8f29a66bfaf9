"""a merge of an axis with itself."""

from __future__ import annotations

from tilec.errors import MergeError
from tilec.ir import GemmFusion

EXPECT = MergeError, "C: cannot merge axis 1 with itself"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.merge(1, -2)
