"""an element type tilec does not have."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion

EXPECT = PolicyError, "dtype must be one of fp16, bf16, fp32 but got 'int8'"


def program() -> None:
    GemmFusion(M=64, N=64, K=64, dtype="int8")
