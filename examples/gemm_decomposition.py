"""A GEMM with a chosen work decomposition (seed 001: split-K, Stream-K and its hybrids).

C tiles (BM, BN) in grouped-raster order (groups of GROUP_M tile rows, Triton's GROUP_SIZE_M),
walked by a persistent grid of SMS CTAs; the decomposition cuts the tiles x k-iterations space:

  DECOMP   auto | dp | splitk | streamk | dp_1sk | sk2_dp | skpp
  SPLITS   split-K parts (splitk)
  SK_WAVES trailing waves in Stream-K (skpp, 0..7)
  FIXUP    atomic | deterministic | reduce_kernel (how partial tiles are summed)
  STAGES   K tiles in flight;  WARPS: warps per CTA;  LOAD: tma | pointer
  B_LAYOUT kn | nk (B given K x N or N x K; both backends print every DECOMP)
  CM, CN   a cluster of CM x CN neighbouring tiles (CUDA: TMA multicast of A across the CN
           tiles of a row, of B across the CM tiles of a column); 1 x 1: no cluster
  SWAP_AB  0 | 1 (CUDA only; "auto": tilec's choice): each CTA computes its tile as
           C^T = B^T A^T, our N on wgmma's M and our M on its N (BM any multiple of 8 up to
           256, BN a multiple of 64: cuBLAS's small and ragged-M tiles); Triton ignores it
  EPILOGUE auto | direct | tma | tma_tile | overlap (CUDA only, not in PARAMS): how C is written

With a cluster (CM*CN > 1) the schedule is seed 004's: the tile counts split by the cluster
factors, each CM x CN group of tiles walked together (the grouped raster over groups, GROUP_M
group rows), and the SMS CTAs cut into clusters of CM*CN (CIDx x RankX); lowering for CUDA cuts
the work per cluster, so every CTA of a cluster keeps one K range and multicast stays valid.
Triton launches no cluster: it keeps the tile order and each CTA loads its own tiles. CM*CN is
at most 16 (more than 8 is non-portable, and the CUDA backend takes at most 8) and divides SMS.

Thin variants: examples/split_k.py, examples/stream_k.py (Stream-K and its hybrids).

    tilec gen examples/gemm_decomposition.py --param DECOMP=streamk -o kernel.py
    tilec explain examples/gemm_decomposition.py --param M=512 --param N=512 --param K=65536
    tilec gen examples/gemm_decomposition.py --target cuda --param CM=2 --param CN=1 -o kernel.cu
"""

from __future__ import annotations

import sympy

from tilec.errors import ParamError
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

# "auto": tilec chooses (a tuned record of this schedule at this shape, else its heuristic) and
# says why; any value given here or by --param is kept as it is
PARAMS = dict(M=4096, N=4096, K=4096, BM="auto", BN="auto", BK="auto", GROUP_M="auto", SMS=132,
              DTYPE="bf16", DECOMP="auto", SPLITS="auto", SK_WAVES="auto", FIXUP="auto",
              STAGES="auto", WARPS="auto", LOAD="auto", B_LAYOUT="kn", CM="auto", CN="auto",
              SWAP_AB="auto")


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, GROUP_M: int, SMS: int,
             DTYPE: str, DECOMP: str, SPLITS: int, SK_WAVES: int, FIXUP: str,
             STAGES: int | str = "auto", WARPS: int | str = "auto", LOAD: str = "auto",
             B_LAYOUT: str = "kn", CM: int = 1, CN: int = 1, SWAP_AB: int = 0,
             EPILOGUE: str = "auto") -> GemmFusion:
    cluster = _cluster(CM, CN, SMS)
    # (CM and CN are symbols when tilec derives multicast closed forms: the clustered walk)
    clustered = not (CM == 1 and CN == 1)
    fusion = GemmFusion(M, N, K, dtype=DTYPE, b_layout=B_LAYOUT,
                        non_portable_cluster=isinstance(cluster, int) and cluster > 8)
    c = fusion.c
    # [M, N, rK] -> [Mo, No, rKo, Mi, Ni, rKi]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    if not clustered:
        c.swizzle(0, 1, GROUP_M)  # grouped raster: GROUP_M tile rows walked column by column
        c.merge(0)  # one linear tile index
        c.split(0, SMS, names=("rt", "pid"))  # persistent: round, CTA
        c.parallelize(1, P.BIDx)
        c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    else:
        # tile counts by the cluster factors: [RM, CM, RN, CN, rKo, ...] -> [RM, RN, CM, CN, ...]
        c.split(0, CM, names=("RM", "CM")).split(2, CN, names=("RN", "CN"))
        c.reorder([0, 2, 1, 3, 4, 5, 6, 7])
        c.swizzle(0, 1, GROUP_M)  # grouped raster of the cluster groups: GROUP_M group rows
        # one tile index, walked by a persistent grid of SMS CTAs in clusters of CM*CN
        c.merge(0).merge(0).merge(0)
        c.split(0, SMS, names=("rt", "sms"))
        c.split(1, cluster, names=("cluster", "rank"))
        c.parallelize(1, P.CIDx).parallelize(2, P.RankX)
        c.parallelize(4, P.Mma).parallelize(5, P.Mma).parallelize(6, P.Mma)
        if any(isinstance(v, sympy.Basic) for v in (SMS, SPLITS, SK_WAVES, STAGES, WARPS)):
            # the instance over symbols that tilec builds for the multicast closed forms
            # needs only the index maps
            fusion.propagate()
            return fusion
    fusion.decompose(DECOMP, splits=SPLITS, sk_waves=SK_WAVES, fixup=FIXUP, sms=SMS)
    fusion.set_kernel(stages=STAGES, warps=WARPS, load=LOAD, swap_ab=SWAP_AB,
                      epilogue=EPILOGUE)
    fusion.propagate()
    return fusion


def _cluster(CM: int, CN: int, SMS: int) -> int:
    """CTAs per cluster, CM*CN, checked: positive factors, at most 16 CTAs, dividing SMS."""
    for name, v in (("CM", CM), ("CN", CN)):
        if not isinstance(v, sympy.Basic) and (isinstance(v, bool) or not isinstance(v, int)
                                               or v < 1):
            raise ParamError(f"parameter {name} must be a positive integer (the cluster's tiles "
                             f"along {name[1]}) but got {v!r}")
    size = CM * CN
    if isinstance(size, int) and size > 16:
        raise ParamError(f"parameters CM={CM}, CN={CN} ask for a cluster of {size} CTAs; a "
                         f"multicast mask addresses at most 16 (more than 8 is non-portable)")
    if isinstance(size, int) and isinstance(SMS, int) and SMS % size:
        raise ParamError(f"parameter SMS={SMS} must be a multiple of the cluster's CM*CN = "
                         f"{size} CTAs (CM={CM}, CN={CN})")
    return size
