"""a RankX axis of symbolic extent."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "RankX (C axis 1 (iRankX.Moi{CLUSTER})) must have a constant extent but got CLUSTER"


def program() -> None:
    g = GemmFusion(M=8192, N=256, K=64)
    g.c.split(0, 128).split(0, "CLUSTER").parallelize(1, P.RankX)
    infer_launch(g)
