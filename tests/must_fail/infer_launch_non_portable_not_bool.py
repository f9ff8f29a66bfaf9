"""infer_launch's non_portable override given as a word."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import GemmFusion, infer_launch

EXPECT = LaunchError, "infer_launch: non_portable must be True, False or None but got 'yes'"


def program() -> None:
    infer_launch(GemmFusion(M=64, N=64, K=64), non_portable="yes")  # type: ignore[arg-type]
