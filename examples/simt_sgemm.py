"""SIMT fp32 SGEMM schedules (CUDA cores, no tensor cores), one family, picked by ``KIND``:

=========  =====================================================================================
KIND       schedule of C's tile (BM x BN, K tiles of BK staged through shared memory)
=========  =====================================================================================
smem       one element per thread, block (BN, BM): siboehm's shared-memory kernel
reg1d      TM rows per thread, 1-D block of BM/TM*BN threads: the 1-D register-blocked kernel
reg2d      TM x TN per thread, block (BN/TN, BM/TM), the thread's rows/columns adjacent
vec        reg2d with each thread's TM x TN cut into (TM/4) x (TN/4) groups of 4 x 4 spread over
           the tile (CUTLASS/YHs style): 128-bit shared reads of A and B, 128-bit C stores, and a
           warp's C stores contiguous
=========  =====================================================================================

All edges are predicated (any M, N, K); 128-bit copies are used where alignment is proven.
Sizes left at 0 take the KIND's default (``DEFAULTS``).
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=4096, N=4096, K=4096, KIND="vec", BM=0, BN=0, BK=0, TM=0, TN=0)

DEFAULTS = {
    "smem": dict(BM=32, BN=32, BK=32, TM=1, TN=1),
    "reg1d": dict(BM=64, BN=64, BK=8, TM=8, TN=1),
    "reg2d": dict(BM=128, BN=128, BK=8, TM=8, TN=8),
    "vec": dict(BM=128, BN=128, BK=8, TM=8, TN=8),
}


def schedule(M: int, N: int, K: int, KIND: str = "vec", BM: int = 0, BN: int = 0, BK: int = 0,
             TM: int = 0, TN: int = 0) -> GemmFusion:
    from tilec.errors import ParamError

    if KIND not in DEFAULTS:
        raise ParamError(f"simt_sgemm: KIND must be one of {', '.join(DEFAULTS)} but got {KIND!r}")
    d = DEFAULTS[KIND]
    BM, BN, BK, TM, TN = (v or d[k] for k, v in
                          (("BM", BM), ("BN", BN), ("BK", BK), ("TM", TM), ("TN", TN)))
    fusion = GemmFusion(M, N, K, dtype="fp32")
    c = fusion.c
    # [M, N, rK] -> [Mo, Mi, No, Ni, rKo, rKi]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    if KIND == "smem":
        # [Mo, No, Mi, Ni, Ko, Ki]: threadIdx.y = Mi, threadIdx.x = Ni
        c.reorder([0, 2, 1, 3, 4, 5])
        c.parallelize(0, P.BIDy).parallelize(1, P.BIDx).parallelize(2, P.TIDy).parallelize(3, P.TIDx)
    elif KIND == "reg1d":
        # Mi -> [Mt, Mr]; [Mo, No, Mt, Ni, Ko, Ki, Mr]; threadIdx.x = Mt*BN + Ni
        c.split(1, TM, names=("Mt", "Mr"))
        c.reorder([0, 3, 1, 4, 5, 6, 2])
        c.merge(2)
        c.parallelize(0, P.BIDy).parallelize(1, P.BIDx).parallelize(2, P.TIDx)
    elif KIND == "reg2d":
        # Mi -> [Mt, Mr], Ni -> [Nt, Nr]; [Mo, No, Mt, Nt, Ko, Ki, Mr, Nr]
        c.split(1, TM, names=("Mt", "Mr")).split(4, TN, names=("Nt", "Nr"))
        c.reorder([0, 3, 1, 4, 6, 7, 2, 5])
        c.parallelize(0, P.BIDy).parallelize(1, P.BIDx).parallelize(2, P.TIDy).parallelize(3, P.TIDx)
    else:
        # Mi{BM} -> [Mro{TM/4}, Mt{BM/TM}, Mri{4}] (m = Mro*BM*4/TM + Mt*4 + Mri), same for N
        c.split(1, TM // 4, inner=False, names=("Mro", "Mx")).split(2, 4, names=("Mt", "Mri"))
        c.split(5, TN // 4, inner=False, names=("Nro", "Nx")).split(6, 4, names=("Nt", "Nri"))
        # [Mo, Mro, Mt, Mri, No, Nro, Nt, Nri, Ko, Ki] -> [Mo, No, Mt, Nt, Ko, Ki, Mro, Mri, Nro, Nri]
        c.reorder([0, 4, 2, 6, 8, 9, 1, 3, 5, 7])
        c.parallelize(0, P.BIDy).parallelize(1, P.BIDx).parallelize(2, P.TIDy).parallelize(3, P.TIDx)
        c.parallelize(7, P.Vectorize).parallelize(9, P.Vectorize)
    fusion.propagate()
    return fusion


if __name__ == "__main__":
    from tilec.app.cli import main

    raise SystemExit(main(["show", __file__, *__import__("sys").argv[1:]]))
