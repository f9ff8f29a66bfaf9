"""a reorder dict that moves one axis twice (-3 is 0)."""

from __future__ import annotations

from tilec.errors import ReorderError
from tilec.ir import GemmFusion

EXPECT = ReorderError, "C: reorder {0: 1, -3: 2} is not a permutation: axis 0 is moved twice"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.reorder({0: 1, -3: 2})
