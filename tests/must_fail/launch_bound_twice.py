"""two axes bound to BIDx before they entered a view (so parallelize never saw them)."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import IterDomain, TensorView, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "T: BIDx is bound twice, to axis 0 (iBIDx.a{4}) and axis 1 (iBIDx.b{8})"


def program() -> None:
    a = IterDomain("a", 4, ptype=P.BIDx)
    b = IterDomain("b", 8, ptype=P.BIDx)
    infer_launch([TensorView("T", [a, b])])
