"""Stream-K and its hybrids (seed 001): a persistent grid of SMS CTAs; the tiles x k-iterations
of the Stream-K region are cut evenly over the CTAs, the other tiles go data-parallel.

  DECOMP    streamk  every tile in Stream-K (perfect balance, worst L2 reuse)
            dp_1sk   DP waves, then the last partial wave (+1 wave if small) in Stream-K
            sk2_dp   a first Stream-K region (1-2 tiles per CTA), then DP waves
            skpp     Stream-K++: the last SK_WAVES (0..7) waves in Stream-K
  SK_WAVES  trailing waves in Stream-K (skpp)
  FIXUP     atomic | deterministic | reduce_kernel

The default problem has 12 x 12 = 144 tiles on 132 SMs: one full wave and a 12-tile tail that
data-parallel would run on 12 SMs while 120 idle.

    tilec viz examples/stream_k.py --kind timeline -o streamk.png
    tilec viz examples/stream_k.py --param DECOMP=dp_1sk --kind timeline -o dp_1sk.png
    tilec gen examples/stream_k.py --param DECOMP=sk2_dp -o kernel.py

Both backends print these (--target cuda: the fix-up runs in the kernel; FIXUP=reduce_kernel is Triton only).
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=1536, N=1536, K=4096, BM=128, BN=128, BK=64, SMS=132, DECOMP="streamk",
              SK_WAVES=1, FIXUP="deterministic", DTYPE="bf16")

STREAM_K_FAMILY = ("streamk", "dp_1sk", "sk2_dp", "skpp")


def schedule(M: int, N: int, K: int, BM: int, BN: int, BK: int, SMS: int, DECOMP: str,
             SK_WAVES: int, FIXUP: str, DTYPE: str) -> GemmFusion:
    from tilec.errors import ParamError

    if DECOMP not in STREAM_K_FAMILY:
        raise ParamError(f"stream_k: DECOMP must be one of {', '.join(STREAM_K_FAMILY)} but got "
                         f"{DECOMP!r} (split-K: examples/split_k.py; any: gemm_decomposition.py)")
    fusion = GemmFusion(M, N, K, dtype=DTYPE)
    c = fusion.c
    # [M, N, rK] -> [Mo, No, rKo, Mi, Ni, rKi] -> [T, rKo, ...] -> [rt, pid, rKo, ...]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni")).split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    c.merge(0)
    c.split(0, SMS, names=("rt", "pid"))  # persistent: round, CTA
    c.parallelize(1, P.BIDx)
    c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    fusion.decompose(DECOMP, sk_waves=SK_WAVES, fixup=FIXUP, sms=SMS)
    fusion.propagate()
    return fusion
