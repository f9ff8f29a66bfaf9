"""a fix-up that does not exist."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion

EXPECT = PolicyError, "fix-up must be one of atomic, deterministic, reduce_kernel but got 'sum'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.decompose("splitk", splits=2, fixup="sum")
