"""derive(fusion, 3): a multicast mode that is not one (an AttributeError deep inside before)."""

from __future__ import annotations

from tilec.errors import PolicyError
from tilec.ir import GemmFusion
from tilec.transforms.multicast.derive import derive

EXPECT = PolicyError, "multicast mode must be one of leader, sliced but got 3"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)
    derive(f, 3)  # type: ignore[arg-type]
