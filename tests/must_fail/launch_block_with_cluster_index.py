"""BIDx and CIDx bound in one view built by hand."""

from __future__ import annotations

from tilec.errors import LaunchError
from tilec.ir import IterDomain, TensorView, infer_launch
from tilec.ir import ParallelType as P

EXPECT = LaunchError, "BIDx (T axis 1 (iBIDx.n{4})) and CIDx (T axis 0 (iCIDx.c{2})) are both bound: BIDx = CIDx * clusterDim + RankX; bind one or the other"


def program() -> None:
    cid = IterDomain("c", 2, ptype=P.CIDx)
    bid = IterDomain("n", 4, ptype=P.BIDx)
    infer_launch([TensorView("T", [cid, bid])])
