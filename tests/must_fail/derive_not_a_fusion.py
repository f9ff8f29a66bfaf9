"""derive(3): the first argument is not a GemmFusion (an AttributeError deep inside before)."""

from __future__ import annotations

from tilec.errors import TilecError
from tilec.transforms.multicast.derive import derive

EXPECT = TilecError, "derive: fusion must be a GemmFusion but got int 3"


def program() -> None:
    derive(3)  # type: ignore[arg-type]
