"""set_cluster(2) on a CIDx schedule with no RankX axis."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "cluster dim x is set to 2 but RankX is not bound, so it is 1 (CIDx at C axis 0 (iCIDx.Mo{4}))"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64).parallelize(0, P.CIDx)
    f.set_cluster(2)
    infer_launch(f)
