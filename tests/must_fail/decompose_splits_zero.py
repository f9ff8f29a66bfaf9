"""a split-K decomposition into 0 parts."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "decompose: splits must be a positive integer but got 0"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.decompose("splitk", splits=0)
