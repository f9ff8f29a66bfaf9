"""blockIdx.x bound in a view that binds clusterIdx.x: BIDx = CIDx * clusterDim + RankX."""

from __future__ import annotations

from tilec.errors import ParallelizeError
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

EXPECT = ParallelizeError, "C: cannot bind axis 3 (iS.N{128}) to BIDx: axis 0 (iCIDx.Moo{2}) is bound to CIDx, and BIDx = CIDx * clusterDim.x + RankX; bind BIDx, or CIDx and RankX"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64).split(0, 2).parallelize(0, P.CIDx).parallelize(3, P.BIDx)
