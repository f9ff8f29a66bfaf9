"""The plainest GEMM schedule: one CTA per C tile, tile rows on blockIdx.y, columns on blockIdx.x.

    tilec gen examples/gemm_basic.py -o kernel.py            # Triton, with run(a, b) -> c
    tilec gen examples/gemm_basic.py --target cuda --param B_LAYOUT=nk -o kernel.cu
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=1024, N=1024, K=1024, BM=128, BN=128, BK=64, DTYPE="bf16", B_LAYOUT="kn")


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, DTYPE: str,
             B_LAYOUT: str) -> GemmFusion:
    fusion = GemmFusion(M, N, K, dtype=DTYPE, b_layout=B_LAYOUT)
    c = fusion.c
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])  # [Mo, No, rKo, Mi, Ni, rKi]
    c.parallelize(0, P.BIDy).parallelize(1, P.BIDx)
    c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    fusion.propagate()
    return fusion
