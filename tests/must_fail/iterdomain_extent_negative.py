"""an axis built by hand with a negative extent."""

from __future__ import annotations

from tilec.errors import SplitFactorError
from tilec.ir import IterDomain

EXPECT = SplitFactorError, "IterDomain a: extent must be a positive integer (or a positive integer expression) but got -4"


def program() -> None:
    IterDomain("a", -4)
