"""BIDx bound to 4 tiles in one view and 8 in another."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import IterDomain, TensorView, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "BIDx is bound to different extents: 4 at T1 axis 0 (iBIDx.ao{4}) but 8 at T2 axis 0 (iBIDx.ao{8})"


def program() -> None:
    t1 = TensorView("T1", [IterDomain("a", 64)]).split(0, 16).parallelize(0, P.BIDx)
    t2 = TensorView("T2", [IterDomain("a", 64)]).split(0, 8).parallelize(0, P.BIDx)
    infer_launch([t1, t2])
