"""a decomposition kind that does not exist."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion

EXPECT = PolicyError, "decomposition must be one of auto, dp, splitk, streamk, dp_1sk, sk2_dp, skpp, dp_ft but got 'broadcast'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.decompose("broadcast")
