"""Stream-K++ with 8 trailing Stream-K waves (0..7)."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "decompose: sk_waves must be an integer in 0..7 but got 8"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.decompose("skpp", sk_waves=8)
