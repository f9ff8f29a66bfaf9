"""a RankX axis of 32 CTAs: more than a 16-bit multicast mask addresses."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "cluster (32, 1, 1) (RankX at C axis 1 (iRankX.Moi{32})) has 32 CTAs; a multicast mask addresses at most 16 (16-bit ctaMask)"


def program() -> None:
    g = GemmFusion(M=8192, N=256, K=64, non_portable_cluster=True)
    g.c.split(0, 128).split(0, 32).parallelize(0, P.CIDx).parallelize(1, P.RankX)
    infer_launch(g)
