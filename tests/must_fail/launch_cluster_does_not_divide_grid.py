"""clusters of 3 CTAs over a grid of 4."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "cluster dim x = 3 does not divide grid dim x = 4 (C axis 0 (iBIDx.Mo{4}))"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 64).parallelize(0, P.BIDx)
    f.set_cluster(3)
    infer_launch(f)
