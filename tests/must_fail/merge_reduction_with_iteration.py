"""a merge of the reduction axis K with the iteration axis N."""

from __future__ import annotations

from tilec.errors import MergeError
from tilec.ir import GemmFusion

EXPECT = MergeError, "C: cannot merge reduction axis rS.K{64} (position 2) with iteration axis iS.N{128} (position 1)"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.merge(1)
