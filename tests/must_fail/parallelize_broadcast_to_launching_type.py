"""a broadcast axis of an operand tile bound to threadIdx.x."""

from __future__ import annotations

from tilec.errors import ParallelizeError
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

EXPECT = ParallelizeError, "A_smem: broadcast axis bS.Ni{64} (position 3) cannot be bound to TIDx: a broadcast launches no work; bind the consumer's axis instead"


def program() -> None:
    f = GemmFusion(M=256, N=128, K=64)  # C[iS.M{256}, iS.N{128}, rS.K{64}]
    f.c.split(0, 128).split(2, 64)
    f.propagate()
    assert f.a_smem is not None
    f.a_smem.parallelize(3, P.TIDx)
