"""a B layout that is neither kn nor nk."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion

EXPECT = PolicyError, "B layout must be one of kn (K x N, row-major), nk (given as N x K) but got 'mk'"


def program() -> None:
    GemmFusion(M=64, N=64, K=64, b_layout="mk")
