"""The naive SGEMM of the coalescing seed: one thread per element of C, C[x][y] with
``x = blockIdx.x*B + threadIdx.x`` (a row, M) and ``y = blockIdx.y*B + threadIdx.y`` (a column, N).

Consecutive lanes of a warp differ in threadIdx.x, so they walk down a column of A and of C
(stride K and N elements: one 32-byte sector per lane) and all read the same element of B
(broadcast).  ``tilec explain`` prints that analysis; compare ``coalescing_coalesced.py``.

Run ``python examples/coalescing_naive.py`` to see the views and index maps.
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=4096, N=4096, K=4096, B=32)


def schedule(M: int, N: int, K: int, B: int) -> GemmFusion:
    fusion = GemmFusion(M, N, K, dtype="fp32")
    c = fusion.c
    # [M, N, rK] -> [Mo, Mi, No, Ni, rK]
    c.split(0, B, names=("Mo", "Mi")).split(2, B, names=("No", "Ni"))
    # x = bidx*B + tidx (M), y = bidy*B + tidy (N)
    c.parallelize(0, P.BIDx).parallelize(1, P.TIDx).parallelize(2, P.BIDy).parallelize(3, P.TIDy)
    fusion.propagate()
    return fusion


if __name__ == "__main__":
    from tilec.app.cli import main

    raise SystemExit(main(["show", __file__, *__import__("sys").argv[1:]]))
