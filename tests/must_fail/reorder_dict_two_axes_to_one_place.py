"""a reorder dict that moves two axes to one position (-1 is 2)."""

from __future__ import annotations

from tilec.errors import ReorderError
from tilec.ir import GemmFusion

EXPECT = ReorderError, "C: reorder {0: 2, 1: -1} is not a permutation: axes 0 and 1 both move to position 2"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.reorder({0: 2, 1: -1})
