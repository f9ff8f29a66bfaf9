"""an axis built by hand with a number for its name."""

from __future__ import annotations

from tilec.errors import AxisNameError
from tilec.ir import IterDomain

EXPECT = AxisNameError, "an IterDomain's name must be a non-empty string but got 3"


def program() -> None:
    IterDomain(3, 4)  # type: ignore[arg-type]
