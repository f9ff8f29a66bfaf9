"""set_cluster(4) on a schedule whose RankX axis has 2 CTAs."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "cluster dim x is set to 4 but RankX is bound to extent 2 (C axis 1 (iRankX.Moi{2}))"


def program() -> None:
    g = GemmFusion(M=8192, N=256, K=64)
    g.c.split(0, 128).split(0, 2).parallelize(0, P.CIDx).parallelize(1, P.RankX)
    g.set_cluster(4)
    infer_launch(g)
