"""a parallel type given as a string."""

from __future__ import annotations

from tilec.errors import ParallelizeError
from tilec.ir import GemmFusion

EXPECT = ParallelizeError, "C: axis 0 must be bound to a ParallelType but got 'BIDx'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.parallelize(0, "BIDx")
