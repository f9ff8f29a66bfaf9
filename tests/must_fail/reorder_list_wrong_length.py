"""a reorder list that leaves an axis out."""

from __future__ import annotations

from tilec.errors import ReorderError
from tilec.ir import GemmFusion

EXPECT = ReorderError, "C: reorder [1, 0] is not a permutation of the 3 loop axes 0..2: axes [2] are missing"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.reorder([1, 0])
