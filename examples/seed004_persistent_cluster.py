"""The persistent, clustered GEMM schedule of the nvFuser TMA-multicast discussion (seed 004).

C tiles (BM, BN); the tile counts split by the cluster factors into (RM, CM, RN, CN); reordered
to (RM, RN, CM, CN) so that a group of CM x CN neighbouring tiles is walked together; merged
into one tile index T; split by the number of SMs into (RT, SMs) for a persistent grid; SMs split
into the cluster index (CIDx) and the CTA's rank in the cluster (RankX).

    T = i_rt * SMS + cidx * CLUSTER + rank
    tile row    i_bm = T / (CM*CN) / RN * CM + T % (CM*CN) / CN
    tile column i_bn = T / (CM*CN) % RN * CN + T % CN

DECOMP (dp | splitk | streamk | dp_1sk | sk2_dp | skpp), SPLITS, SK_WAVES and FIXUP (atomic |
deterministic) choose the work decomposition; ORDER="grouped" walks the cluster groups in a
grouped raster (GROUP group rows, column by column: a wave reads fewer rows of A and columns of
B; "rows": row-major groups); STAGES sets the shared-memory pipeline depth; EPILOGUE how the
CUDA kernel writes C (None: the printer's choice; "overlap": stored from registers during the
next tile's MMAs; "tma", "tma_tile", "direct"); EVICT the L2 hints of A's and B's TMA loads
("last,first": A kept, B streamed; None: lowering's rule); PREFETCH how many k-iterations ahead
the producer prefetches its boxes into L2 (None: no prefetch); with a cluster, lowering for CUDA cuts the work per
cluster, so every CTA of a cluster keeps the same K range and multicast stays valid.

Run ``tilec show examples/seed004_persistent_cluster.py --param CN=2`` or
``python examples/seed004_persistent_cluster.py --param CN=2``.
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

# B_LAYOUT "nk": B given as N x K (K-major), what the Hopper WGMMA path reads; "kn" for K x N.
PARAMS = dict(M=8192, N=8192, K=8192, BM=128, BN=256, BK=64, CM=2, CN=1, SMS=132, CLUSTER=2,
              DTYPE="bf16", B_LAYOUT="nk", DECOMP="dp", SPLITS=1, SK_WAVES=1,
              FIXUP="deterministic", ORDER="rows", GROUP=8, STAGES=None, EPILOGUE=None, EVICT=None,
              PREFETCH=None)


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, CM: int, CN: int, SMS: int,
             CLUSTER: int, DTYPE: str = "bf16", B_LAYOUT: str = "nk", DECOMP: str = "dp",
             SPLITS: int = 1, SK_WAVES: int = 1, FIXUP: str = "deterministic",
             ORDER: str = "rows", GROUP: int = 8, STAGES: int | None = None,
             EPILOGUE: str | None = None, EVICT: str | None = None,
             PREFETCH: int | None = None) -> GemmFusion:
    # clusters of more than 8 CTAs are non-portable (up to 16: the multicast mask's width);
    # CLUSTER is a symbol when tilec derives closed forms over the parameters
    fusion = GemmFusion(M, N, K, dtype=DTYPE, b_layout=B_LAYOUT,
                        non_portable_cluster=isinstance(CLUSTER, int) and CLUSTER > 8)
    c = fusion.c
    # [M, N, rK] -> [Mo, Mi, No, Ni, rKo, rKi] -> [Mo, No, rKo, Mi, Ni, rKi]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    # tile counts by the cluster factors: [RM, CM, RN, CN, rKo, Mi, Ni, rKi] -> [RM, RN, CM, CN, ...]
    c.split(0, CM, names=("RM", "CM")).split(2, CN, names=("RN", "CN"))
    c.reorder([0, 2, 1, 3, 4, 5, 6, 7])
    if ORDER == "grouped":
        # grouped raster of the cluster groups: GROUP group rows walked column by column (L2 reuse)
        c.swizzle(0, 1, GROUP)
    # one tile index T, walked by a persistent grid of SMS CTAs in clusters of CLUSTER
    c.merge(0).merge(0).merge(0)
    c.split(0, SMS, names=("rt", "sms"))
    c.split(1, CLUSTER, names=("cluster", "rank"))
    c.parallelize(1, P.CIDx).parallelize(2, P.RankX)
    c.parallelize(4, P.Mma).parallelize(5, P.Mma).parallelize(6, P.Mma)
    if DECOMP != "dp" and isinstance(SPLITS, int) and isinstance(SK_WAVES, int):
        # (the symbolic instance, built for the multicast closed forms, needs only index maps)
        fusion.decompose(DECOMP, splits=SPLITS, sk_waves=SK_WAVES, fixup=FIXUP,
                         sms=SMS if isinstance(SMS, int) else None)
    if isinstance(STAGES, int) or EPILOGUE is not None or EVICT is not None or PREFETCH:
        # shared-memory pipeline stages, the CUDA epilogue, L2 hints and prefetch (None: the
        # target's default)
        fusion.set_kernel(stages=STAGES if isinstance(STAGES, int) else None, epilogue=EPILOGUE,
                          evict=EVICT, prefetch=PREFETCH if isinstance(PREFETCH, int) else None)
    fusion.propagate()
    return fusion


if __name__ == "__main__":
    from tilec.app.cli import main

    raise SystemExit(main(["show", __file__, *__import__("sys").argv[1:]]))
