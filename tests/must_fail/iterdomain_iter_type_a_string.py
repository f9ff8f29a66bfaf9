"""an axis built by hand with its iteration type given as a string."""

from __future__ import annotations

from tilec.errors import ScheduleError
from tilec.ir import IterDomain

EXPECT = ScheduleError, "IterDomain a: iter_type must be an IterType and ptype a ParallelType but got 'iter' and <ParallelType.SERIAL: 'S'>"


def program() -> None:
    IterDomain("a", 4, "iter")  # type: ignore[arg-type]
