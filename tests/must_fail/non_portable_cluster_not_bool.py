"""non_portable_cluster="yes"."""

from __future__ import annotations

from tilec.errors import FusionError
from tilec.ir import GemmFusion

EXPECT = FusionError, "non_portable_cluster must be True or False but got 'yes'"


def program() -> None:
    GemmFusion(M=64, N=64, K=64, non_portable_cluster="yes")
