"""N = 2.0."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "GEMM size N must be a positive integer or a name but got 2.0"


def program() -> None:
    GemmFusion(M=64, N=2.0, K=64)
