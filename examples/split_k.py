"""Split-K: every C tile's K range cut into SPLITS equal parts, one CTA per (tile, part); the
partial tiles are summed by the fix-up FIXUP (seed 001).

Worth it when there are few, deep tiles (fewer tiles than SMs, long K): the default problem has
4 x 4 = 16 tiles of 128x128 and 256 k-iterations, so 8 parts give 128 CTAs for 132 SMs.

  SPLITS  parts per tile (1..k_iters)
  FIXUP   atomic | deterministic | reduce_kernel

    tilec explain examples/split_k.py                       # the split and the cost model
    tilec viz examples/split_k.py --kind timeline -o splitk.png
    tilec gen examples/split_k.py --param SPLITS=4 -o kernel.py

Both backends print it (--target cuda: the fix-up runs in the kernel; FIXUP=reduce_kernel is Triton only).
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=512, N=512, K=16384, BM=128, BN=128, BK=64, SPLITS=8, FIXUP="atomic",
              DTYPE="bf16")


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, SPLITS: int, FIXUP: str,
             DTYPE: str) -> GemmFusion:
    fusion = GemmFusion(M, N, K, dtype=DTYPE)
    c = fusion.c
    # [M, N, rK] -> [Mo, No, rKo, Mi, Ni, rKi]; tiles row-major on blockIdx.x
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    c.merge(0)
    c.parallelize(0, P.BIDx)
    c.parallelize(2, P.Mma).parallelize(3, P.Mma).parallelize(4, P.Mma)
    fusion.decompose("splitk", splits=SPLITS, fixup=FIXUP)
    fusion.propagate()
    return fusion
