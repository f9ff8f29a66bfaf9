"""a view built by hand without a name."""

from __future__ import annotations

from tilec.errors import AxisNameError
from tilec.ir import TensorView

EXPECT = AxisNameError, "a TensorView's name must be a non-empty string but got ''"


def program() -> None:
    TensorView("", [])
