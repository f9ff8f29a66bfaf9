"""a broadcast axis named like a logical axis: C[bS.M{1}, iS.M{256}, ...] would
have two logical axes called M, and the index map one entry for both."""

from __future__ import annotations

from tilec.errors import AxisNameError
from tilec.ir import GemmFusion

EXPECT = AxisNameError, "C: broadcast: name 'M' is the name of logical axis iS.M{256}; a new logical axis needs a name of its own (taken: M, N, K)"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.broadcast(0, name="M")
