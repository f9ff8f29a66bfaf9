"""reorder(None): neither a dict nor a list."""

from __future__ import annotations

from tilec.errors import ReorderError
from tilec.ir import GemmFusion

EXPECT = ReorderError, "C: reorder takes a dict {old_position: new_position} or a list of the 3 old positions in their new order but got None"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.reorder(None)
