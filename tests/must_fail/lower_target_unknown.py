"""lowering for a backend that does not exist."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion
from tilec.transforms.pipeline import lower

EXPECT = PolicyError, "target must be one of triton, cuda but got 'ptx'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    lower(f, target="ptx")
