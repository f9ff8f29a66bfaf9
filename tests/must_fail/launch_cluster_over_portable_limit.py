"""a RankX axis of 16 CTAs without non_portable_cluster."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "cluster (16, 1, 1) (RankX at C axis 1 (iRankX.Moi{16})) has 16 CTAs; the portable limit is 8: pass non_portable_cluster=True to GemmFusion to allow up to 16"


def program() -> None:
    g = GemmFusion(M=8192, N=256, K=64)
    g.c.split(0, 128).split(0, 16).parallelize(0, P.CIDx).parallelize(1, P.RankX)
    infer_launch(g)
