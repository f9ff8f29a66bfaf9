"""M = 0."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "GEMM size M must be a positive integer but got 0"


def program() -> None:
    GemmFusion(M=0, N=64, K=64)
