"""a Stream-K decomposition over -1 SMs."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "decompose: sms must be a positive integer or None but got -1"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.decompose("streamk", sms=-1)
