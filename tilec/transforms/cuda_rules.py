"""The CUDA backend's tile rules (beside :mod:`tilec.transforms.cuda_swap`'s swapped-operand rule):
which tile, stages and, for the deep-K classes, split and cluster the heuristic starts from at
M x N x K; :func:`tilec.transforms.heuristic.heuristic` weighs, decomposes and clusters it. Each
rule cites the H200 probe it was drawn from (bench/results)."""

from __future__ import annotations

from dataclasses import replace

from tilec.ir import ceil_div
from tilec.transforms.knobs import Config
from tilec.transforms.plan import Decomposition, Fixup

# The CUDA tiles weighed where the problem has at least 128 rows and 128 columns (beyond the
# one-tile-row rule), with their rates relative to 128x256: modeled work (critical-path
# k-iterations x tile flops) per millisecond, medians over the H200 shapes measured with both
# tiles (bench/results/dispatch_cuda_h200_2026-11-28.json: 128x192 against 128x256 on 20 shapes,
# 0.975; 128x128 against 128x192 on 11, 0.82). The 192-column tile is what wave quantization
# asks for at 1664^2 x 8192 (117 tiles in one wave: 1.01x cuBLAS against 0.81x with 91 128x256
# tiles) and 320 x 7168 x 2048 (0.85x against 0.61x with 128x128).
CUDA_TILES = (
    (Config(BM=128, BN=256, BK=64, WARPS=12, STAGES=4), 1.0),
    (Config(BM=128, BN=192, BK=64, WARPS=12, STAGES=4), 0.975),
    (Config(BM=128, BN=128, BK=64, WARPS=12, STAGES=4), 0.80),
)
CUDA_WEIGHED = "cuda: at least 128 rows and columns"
# cuBLAS's kernel at 512^2 x 65536 and 256 x 1024 x 131072 (Nsight Compute: nvjet_sm90_tst_128x128
# _64x6_2x1_v_bz_splitK, 128 CTAs): the same through gemm_decomposition's knobs ran them at 0.83x and
# 0.88x cuBLAS against 0.76x and 0.72x for 128x256 split-K 16 without a cluster; 6 stages and the
# cluster each alone gained 0-4% (bench/results/cuda_probe_deepk_nvjet_h200_2026-11-28_s13.json).
# With the 2x1 cluster, 128x256 split-K 16 (4 stages) ran them at 0.847x and 0.935-0.941x against
# 0.843x and 0.875-0.884x for the 128x128 kernel, twice in two runs (session 15:
# cuda_probe_s15a_h200_2026-11-28.json, cuda_probe_s15b_...): half the B bytes per flop. So the
# tile is 128x256 where N holds two of them, 128x128 where it does not.
CUDA_FEW_DEEP = "cuda: very few tiles, deep K: 2x1 cluster, split-K over the SMs"
# One 128x128 tile, deep K (128 x 128 x 65536): 6 stages and split-K 48 ran 0.868x cuBLAS against
# 0.70-0.74x for the cost model's 4 stages, split-K 32; 32 parts at 6 stages 0.785x, 64 0.822-0.845x,
# 80 0.802x, 96 0.777x, 128 (4 stages) 0.552x; 128x64 or 64x128 tiles with 64 parts 0.66-0.67x
# (cuda_probe_s15a_h200_2026-11-28.json, cuda_probe_s15b_...).  Those ran the reduce kernel; the
# deterministic fix-up, which the CUDA launcher spreads over the 48 resident parts
# (codegen/cuda/printer/spread.py), ran 0.896x against its 0.862x in one run (session 16,
# bench/round_s16_dev1.sh); the atomic fix-up, 0.928x there, is not bitwise repeatable.
CUDA_ONE_DEEP = "cuda: one 128x128 tile, deep K: 6 stages, split-K 48, the deterministic fix-up"
ONE_DEEP_PARTS = 48


def few_deep(M: int, N: int, K: int, sms: int) -> bool:
    """At most sms/8 128x128 tiles over two tile rows or more, K >= 16384 (:data:`CUDA_FEW_DEEP`)."""
    return M > 128 and K >= 16384 and ceil_div(M, 128) * ceil_div(N, 128) * 8 <= sms


def few_deep_config(M: int, N: int, K: int, sms: int) -> Config:
    """:data:`CUDA_FEW_DEEP`'s config: 128x256 (4 stages) where N holds two such tiles, else
    128x128 (6), split-K over the SMs (the tiles times the parts fill them once, 64 k-iterations a
    part at least) with the reduce kernel; the cluster is :func:`~.heuristic._cluster`'s."""
    tile = (Config(BM=128, BN=256, BK=64, WARPS=12, STAGES=4) if N >= 512
            else Config(BM=128, BN=128, BK=64, WARPS=12, STAGES=6))
    parts = min(sms // (ceil_div(M, tile.BM) * ceil_div(N, tile.BN)), ceil_div(K, 64) // 64)
    return replace(tile, DECOMP=Decomposition.SPLIT_K, SPLITS=parts, FIXUP=Fixup.REDUCE_KERNEL)


def cuda_rule(M: int, N: int, K: int, sms: int = 132) -> tuple[Config, str]:
    """The CUDA backend's tiles: WGMMA wants BM in 64s, two consumer warpgroups of 64 rows.
    :data:`CUDA_WEIGHED` means: weigh :data:`CUDA_TILES` (its config is the first of them); the
    deep-K rules (:data:`CUDA_FEW_DEEP`, :data:`CUDA_ONE_DEEP`) give their split-K too."""
    if few_deep(M, N, K, sms):
        return few_deep_config(M, N, K, sms), CUDA_FEW_DEEP
    if M <= 128 and N <= 128 and K >= 32768:
        return (Config(BM=128, BN=128, BK=64, WARPS=12, STAGES=6, DECOMP=Decomposition.SPLIT_K,
                       SPLITS=min(ONE_DEEP_PARTS, ceil_div(K, 64) // 16),
                       FIXUP=Fixup.DETERMINISTIC), CUDA_ONE_DEEP)
    if M <= 96 and ceil_div(M, 64) * ceil_div(N, 256) >= 66:
        # 64-row tiles where a 128-row tile would be a third or more padding, and 64x256 where
        # there are half a wave of them: at 72, 77 and 96 x 14336 x 4096 (112 tiles) they ran
        # 0.89-0.91x cuBLAS against 0.67-0.74x for 128x64 (224); at 4 and 64 x 28672 x 4096
        # 1.02-1.04x against 0.80-0.99x for 64x128; 100 x 4096 x 4096 (32 tiles) keeps 128x64
        # (bench/results/cuda_probe_rows_h200_2026-11-28_s13.json, cuda_probe_decode_...)
        return (Config(BM=64, BN=256, BK=64, WARPS=8, STAGES=4),
                "cuda: M <= 96, enough 64x256 tiles")
    if 64 < M <= 128 and ceil_div(N, 64) >= 32:
        # one tile row, N streamed: 128x4096x7168 split-K 2 ran 25.0 us = 1.07x cuBLAS
        # with 128x64 tiles and 8 stages (192 KB in flight per SM), 27.5 us with 128x128 and 4
        # or 6, 29.7 with 64x256 and 5 (bench/results/cuda_perf_2026-11-23_s7b.json)
        return (Config(BM=128, BN=64, BK=64, WARPS=12, STAGES=8),
                "cuda: one tile row (M <= 128), 128x64 tiles, 8 stages deep")
    if M >= 128 and N >= 128:
        return CUDA_TILES[0][0], CUDA_WEIGHED
    if K >= 8192 and ceil_div(M, 128) * ceil_div(N, 256) >= 32:
        # few rows, many 128x256 tiles, deep K: 16 x 10240 x 8192 split-K 3 ran 0.92x cuBLAS,
        # 32 x 8192 x 28672 split-K 4 0.90x (bench/results/dispatch_cuda_h200_2026-11-28.json)
        return (Config(BM=128, BN=256, BK=64, WARPS=12, STAGES=4),
                "cuda: deep K, 32 or more 128x256 tiles")
    if M <= 64:
        # decode rows stream B: 8 stages (192 KB in flight) ran 1, 2, 4 and 64 rows 1.03-1.14x
        # faster than 4, 16 and 48 rows 1.5-2.6% slower (cuda_probe_decode_h200_2026-11-28_s13.json)
        return Config(BM=64, BN=128, BK=64, WARPS=8, STAGES=8), "cuda: decode (M <= 64), 8 stages"
    return Config(BM=64, BN=128, BK=64, WARPS=8, STAGES=4), "cuda: small"
