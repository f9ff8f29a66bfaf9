"""derive(fusion, "broadcast"): a multicast mode that does not exist (a bare
ValueError from the enum before)."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion
from tilec.transforms.multicast.derive import derive

EXPECT = PolicyError, "multicast mode must be one of leader, sliced but got 'broadcast'"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    derive(f, "broadcast")
