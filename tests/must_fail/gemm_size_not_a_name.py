"""K = "8k": neither an int nor a name."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "GEMM size K must be a positive integer or a name but got '8k'"


def program() -> None:
    GemmFusion(M=64, N=64, K="8k")
