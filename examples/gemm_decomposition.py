"""A GEMM with a chosen work decomposition (seed 001: split-K, Stream-K and its hybrids).

C tiles (BM, BN) in grouped-raster order (groups of GROUP_M tile rows, Triton's GROUP_SIZE_M),
walked by a persistent grid of SMS CTAs; the decomposition cuts the tiles x k-iterations space:

  DECOMP   auto | dp | splitk | streamk | dp_1sk | sk2_dp | skpp
  SPLITS   split-K parts (splitk)
  SK_WAVES trailing waves in Stream-K (skpp, 0..7)
  FIXUP    atomic | deterministic | reduce_kernel (how partial tiles are summed)
  STAGES   K tiles in flight;  WARPS: warps per CTA;  LOAD: tma | pointer
  B_LAYOUT kn | nk (B given K x N or N x K; both backends print every DECOMP)

Thin variants: examples/split_k.py, examples/stream_k.py (Stream-K and its hybrids).

    tilec gen examples/gemm_decomposition.py --param DECOMP=streamk -o kernel.py
    tilec explain examples/gemm_decomposition.py --param M=512 --param N=512 --param K=65536
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

# "auto": tilec chooses (a tuned record of this schedule at this shape, else its heuristic) and
# says why; any value given here or by --param is kept as it is
PARAMS = dict(M=4096, N=4096, K=4096, BM="auto", BN="auto", BK="auto", GROUP_M="auto", SMS=132,
              DTYPE="bf16", DECOMP="auto", SPLITS="auto", SK_WAVES="auto", FIXUP="auto",
              STAGES="auto", WARPS="auto", LOAD="auto", B_LAYOUT="kn")


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, GROUP_M: int, SMS: int,
             DTYPE: str, DECOMP: str, SPLITS: int, SK_WAVES: int, FIXUP: str,
             STAGES: int | str = "auto", WARPS: int | str = "auto", LOAD: str = "auto",
             B_LAYOUT: str = "kn") -> GemmFusion:
    fusion = GemmFusion(M, N, K, dtype=DTYPE, b_layout=B_LAYOUT)
    c = fusion.c
    # [M, N, rK] -> [Mo, No, rKo, Mi, Ni, rKi]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    c.swizzle(0, 1, GROUP_M)  # grouped raster: GROUP_M tile rows walked column by column
    c.merge(0)  # one linear tile index
    c.split(0, SMS, names=("rt", "pid"))  # persistent: round, CTA
    c.parallelize(1, P.BIDx)
    c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    fusion.decompose(DECOMP, splits=SPLITS, sk_waves=SK_WAVES, fixup=FIXUP, sms=SMS)
    fusion.set_kernel(stages=STAGES, warps=WARPS, load=LOAD)
    fusion.propagate()
    return fusion
