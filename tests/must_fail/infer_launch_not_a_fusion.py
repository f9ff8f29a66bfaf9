"""infer_launch of something that is neither a fusion nor a list of views."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import infer_launch

EXPECT = LaunchError, "infer_launch takes a GemmFusion or a list of TensorViews but got 'C'"


def program() -> None:
    infer_launch("C")
