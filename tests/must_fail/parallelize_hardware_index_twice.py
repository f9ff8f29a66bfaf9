"""blockIdx.x bound to two axes of one view."""

from __future__ import annotations

from tilec.errors import ParallelizeError
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

EXPECT = ParallelizeError, "C: BIDx is already bound to axis 0 (iBIDx.Mo{2}); cannot bind it to axis 2 (iS.N{128}) as well"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 128).parallelize(0, P.BIDx).parallelize(2, P.BIDx)
