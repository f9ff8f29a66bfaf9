"""Grouped raster: C tiles walked in bands of GROUP_M tile rows, column by column inside a band
(Triton's GROUP_SIZE_M), so that neighbouring CTAs share rows of A and columns of B in L2.

``c.swizzle(Mo, No, GROUP_M)`` reorders the tile grid; merging it gives one linear tile index on
blockIdx.x (one CTA per tile, not persistent).  With GROUP_M=1 the order is row-major.

    tilec explain examples/grouped_raster.py --param M=1024 --param N=512   # tile_m(t), tile_n(t)
    tilec viz examples/grouped_raster.py --kind tiles -o grouped.png
    tilec gen examples/grouped_raster.py -o kernel.py                        # Triton, run(a, b)
    tilec gen examples/grouped_raster.py --target cuda --param B_LAYOUT=nk -o kernel.cu
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=2048, N=2048, K=1024, BM=128, BN=128, BK=64, GROUP_M=4, DTYPE="bf16",
              B_LAYOUT="kn")


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, GROUP_M: int, DTYPE: str,
             B_LAYOUT: str) -> GemmFusion:
    fusion = GemmFusion(M, N, K, dtype=DTYPE, b_layout=B_LAYOUT)
    c = fusion.c
    # [M, N, rK] -> [Mo, Mi, No, Ni, rKo, rKi] -> [Mo, No, rKo, Mi, Ni, rKi]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    c.swizzle(0, 1, GROUP_M)  # bands of GROUP_M tile rows, walked column by column
    c.merge(0)  # [T, rKo, Mi, Ni, rKi]: one linear tile index
    c.parallelize(0, P.BIDx)
    c.parallelize(2, P.Mma).parallelize(3, P.Mma).parallelize(4, P.Mma)
    fusion.propagate()
    return fusion


if __name__ == "__main__":
    from tilec.app.cli import main

    raise SystemExit(main(["explain", __file__, *__import__("sys").argv[1:]]))
