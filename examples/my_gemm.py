"""The tutorial's schedule (docs/tutorial.md): persistent CTAs in clusters of CN along N that share
A by TMA multicast."""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=4096, N=4096, K=4096, BM=128, BN=256, BK=64, CN=2, SMS=132, DTYPE="bf16",
              B_LAYOUT="nk")


def schedule(M, N, K, BM, BN, BK, CN, SMS, DTYPE, B_LAYOUT):
    fusion = GemmFusion(M, N, K, dtype=DTYPE, b_layout=B_LAYOUT)
    c = fusion.c
    # [M, N, rK] -> [Mo, Mi, No, Ni, rKo, rKi] -> [Mo, No, rKo, Mi, Ni, rKi]
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni"))
    c.split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])
    c.merge(0)                                 # T = Mo * tiles_n + No: row-major tiles
    c.split(0, SMS, names=("rt", "sms"))       # persistent: round rt, CTA sms
    c.split(1, CN, names=("cluster", "rank"))  # clusters of CN CTAs
    c.parallelize(1, P.CIDx).parallelize(2, P.RankX)
    c.parallelize(4, P.Mma).parallelize(5, P.Mma).parallelize(6, P.Mma)
    fusion.propagate()
    return fusion
