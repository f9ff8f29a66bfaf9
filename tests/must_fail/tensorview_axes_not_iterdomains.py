"""a view built by hand from extents instead of IterDomains."""

from __future__ import annotations

from tilec.errors import ScheduleError
from tilec.ir import TensorView

EXPECT = ScheduleError, "T: logical axes must be IterDomains but got 4"


def program() -> None:
    TensorView("T", [4, 8])  # type: ignore[list-item]
