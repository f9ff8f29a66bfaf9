"""The coalesced SGEMM of the coalescing seed: a 1-D block of B*B threads,
``x = blockIdx.x*B + threadIdx.x / B`` (M) and ``y = blockIdx.y*B + threadIdx.x % B`` (N).

The split of C's tile is the same as the naive kernel's; the two thread axes are merged, N
innermost, into one TIDx.  A warp (32 consecutive threadIdx.x, B = 32) then shares one row of A
(broadcast) and reads 32 consecutive elements of a row of B and writes 32 of C (contiguous: four
32-byte sectors per request).  ``TRANSPOSED_2D=True`` gives the seed's 2-D variant
(``x = ... + threadIdx.y``, ``y = ... + threadIdx.x``): same addresses per warp.
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=4096, N=4096, K=4096, B=32, TRANSPOSED_2D=False)


def schedule(M: int, N: int, K: int, B: int, TRANSPOSED_2D: bool = False) -> GemmFusion:
    fusion = GemmFusion(M, N, K, dtype="fp32")
    c = fusion.c
    # [M, N, rK] -> [Mo, Mi, No, Ni, rK] -> [Mo, No, Mi, Ni, rK]
    c.split(0, B, names=("Mo", "Mi")).split(2, B, names=("No", "Ni"))
    c.reorder([0, 2, 1, 3, 4])
    c.parallelize(0, P.BIDx).parallelize(1, P.BIDy)
    if TRANSPOSED_2D:
        c.parallelize(2, P.TIDy).parallelize(3, P.TIDx)
    else:
        # [Mo, No, Mi*Ni, rK]: threadIdx.x = Mi*B + Ni
        c.merge(2)
        c.parallelize(2, P.TIDx)
    fusion.propagate()
    return fusion


if __name__ == "__main__":
    from tilec.app.cli import main

    raise SystemExit(main(["show", __file__, *__import__("sys").argv[1:]]))
