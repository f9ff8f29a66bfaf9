"""a kernel of 0 warps per CTA."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "set_kernel: warps must be a power of two or a multiple of 4 in 1..32, 'auto' or None but got 0"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.set_kernel(warps=0)
