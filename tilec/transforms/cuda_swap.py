"""When the CUDA kernel swaps its operands (``SWAP_AB=1``: each CTA computes its tile as
C^T = B^T A^T, the problem's rows on wgmma's N, so a tile's rows are any multiple of 8 up to 256),
and its tile, for the shapes where cuBLAS does the same.

cuBLAS's kernels on small and ragged row counts (Nsight names on the H200,
bench/results/cublas_kernels_h200_2026-11-28.json) put our N on wgmma's M in 64s and fit our M
tightly: 200 rows as 2 x 104, 333 as 2 x 168, 77 as 80, 48 as 48, 320 as 2 x 160, one tile per
SM at most. Measured through ``bench/dispatch_cuda.py --candidates`` against the unswapped
heuristic in the same run (bench/results/cuda_probe_swap_h200_2026-11-28_s14.json):

=====================  =========================================  ==========  ==========
shape (M x N x K)      swapped tile, decomposition                x cuBLAS    before
=====================  =========================================  ==========  ==========
200 x 4096 x 7168      104x64, 8 stages, dp (128 tiles)           0.944       0.808
333 x 4096 x 4096      168x64, 7 stages, dp (128 tiles)           0.919-0.933 0.766
320 x 7168 x 2048      160x128, 4 stages, dp, TMA-store epilogue  0.909       0.874
77 x 14336 x 4096      80x128, 6 stages, dp (112 tiles)           1.088-1.10  0.909
48 x 4608 x 3584       48x64, 8 stages, dp (72 tiles)             1.006       0.877
1024 x 1024 x 1024     128x64, 8 stages, dp (128 tiles)           0.970       0.773
1 x 6144 x 4096        16x256, split-K 3, deterministic           1.072       0.908
16 x 10240 x 8192      16x256, split-K 3, deterministic           1.071       0.929
32 x 8192 x 28672      32x256, split-K 4, reduce kernel           0.949       0.892
=====================  =========================================  ==========  ==========

(333 rows at 7 stages and 1024^3 at 8: session 15's probes, against 0.880-0.890 at 6 and 0.955 at
7 in the same runs, bench/results/cuda_probe_s15a_h200_2026-11-28.json and ..._s15b_...: the ring
for 64 columns was given 208 KB.)

Past 1024 rows, cuBLAS's 128x168 (1500 x 3584 x 18944) read the same way: 168-row swapped tiles
of 128 columns, in as many waves as the tiles take. Session 15's probes timed them beside the
unswapped heuristic on 13 shapes of 1170-3350 rows. They won where M is cut into 168s with at
most 2.5% of rows wasted, the last wave is at least 93% full and K is at least 3584:
1170 x 14336 x 4096 0.962 against 0.874, 1340 x 4096 x 4096 0.906 / 0.855, 1500 x 3584 x 18944
0.967-0.978 / 0.890-0.915, 1664^2 x 8192 1.059 / 1.004, 1830 x 9216 x 4096 0.967 / 0.921, 2304^2 x
8192 1.056 / 0.991, 2520 x 4352 x 4096 0.947 / 0.934, 3000 x 4608 x 3584 0.946 / 0.910, 3328^2 x 8192
1.041 / 1.003, 3350 x 4096 x 8192 0.953 / 0.927. They lost or tied where a fact failed: a last wave
80% full (2500 x 3584 x 18944: 0.825 against 0.951), 91% (2000 x 5120 x 8192: 0.885 / 0.888), K of
2048 (2680 x 6144 x 2048: 0.858 / 0.977).

Where it lost: 1000^3 (B's rows off 128 bytes: 0.76-0.79 against 0.83), 128 x 128 x 65536 (one
tile: 0.73 either way), more row tiles than needed (333 rows as 4 x 104: 0.52), more tiles than
SMs (200 rows as 168x64: 0.46), and in the first full run with the rule
(bench/results/cuda_probe_swap_moved_h200_2026-11-28_s14.json) two tiles outside the table:
128 rows as 2 x 64 (128 x 4096 x 7168: 0.82 against 0.99 for 128x64 split-K 2) and 512 rows as
2 x 256 with 3 stages (512 x 7168 x 2048: 0.86 against 0.99 for 128x256); 128 rows as one
128x128 tile there won (128 x 14336 x 4096: 1.10 against 1.01).

Off the 50 shapes the rules were drawn on (session 18, ``bench/dispatch.py --fresh``), N = 4096
with 33-168 rows fell between the rules: one row tile of 64 columns gives 64 tiles, under
:func:`rows_tile`'s half wave, so unswapped tiles ran (135 x 4096 x 7168 0.581x, 75 x 4096 x 7168
0.732x). The same swapped tile split in two K parts fills the SMs (bench/results/
cuda_probe_fresh_m*_h200_2026-11-28_s18.json, one run each, against the heuristic then):

=====================  =========================================  ==========  ==========
shape (M x N x K)      swapped tile, decomposition                x cuBLAS    before
=====================  =========================================  ==========  ==========
135 x 4096 x 7168      136x64, 8 stages, split-K 2 (dp: 0.923)    0.988       0.641
75 x 4096 x 7168       80x64, 8 stages, split-K 2 (dp: 0.929)     1.009       0.725
128 x 4096 x 7168      128x64, 8 stages, split-K 2                1.029       0.957
175 x 4096 x 14336     176x64, 7 stages, split-K 2                0.981       0.778
=====================  =========================================  ==========  ==========

Session 19's probes (bench/results/cuda_probe_fresh_m*_h200_2026-11-29_s19.json, one run each,
against the heuristic then) widened the rules where fresh shapes lost:

=====================  =========================================  ==========  ==========
shape (M x N x K)      swapped tile, decomposition                x cuBLAS    before
=====================  =========================================  ==========  ==========
132 x 4096 x 4096      136x64, 8 stages, dp (split-K 2: 0.905)    0.906       0.584
100 x 4096 x 2048      104x64, 8 stages, dp (split-K 2: 0.805)    0.886       0.786
175 x 4096 x 14336     176x64, 6 stages, split-K 2 (7: 0.984)     0.976       0.781
171 x 14336 x 4096     176x128, 4 stages, dp (112 tiles)          0.989       0.832
1062 x 4096 x 14336    8 x 136 rows, 128 columns, dp              0.901       0.759
1700 x 4096 x 14336    12 x 144 rows, 128 columns, dp             0.965       0.913
2451 x 4096 x 7168     16 x 160 rows, 128 columns, dp             0.908       0.880
9 x 7168 x 2048        16x128, 6 stages, dp (split-K 2: 0.982)    1.048       0.889
9 x 4608 x 3584        16x128, 6 stages, split-K 2 (3: 0.960)     0.962       0.845
=====================  =========================================  ==========  ==========

(1369 x 4096 x 4096, 89 rows past 1280: 8 x 176 rows 0.918 against 0.901, kept unswapped.)

Session 20's probes (bench/results/cuda_probe_fresh_h200_2026-11-29_s20.log, the JSON per shape
beside it but the 78-row one's; one run each, against the heuristic then) took rules deeper and
to 32 rows where fresh shapes still lost:

=====================  =========================================  ==========  ==========
shape (M x N x K)      swapped tile, decomposition                x cuBLAS    before
=====================  =========================================  ==========  ==========
261 x 4096 x 14336     2 x 136 rows, 64 columns, dp (128 tiles)   0.930       0.616
78 x 8192 x 28672      80x64, 8 stages, dp (128 tiles)            1.092       0.733
32 x 7168 x 2048       32x64, 8 stages, dp (112 tiles)            1.094       0.902
6 x 8192 x 28672       16x128, 6 stages, split-K 2 (16x256/4:     0.979       0.870
                       0.968)
1037 x 4096 x 4096     8 x 136 rows, 128 columns, dp (the ragged  0.860       0.697
                       cut from K = 3584 again)
=====================  =========================================  ==========  ==========

(Under 3%, kept: 153 x 4096 x 4096 as 160x64 in two K parts 0.915 / 0.895, 1369 x 4096 x 4096 as 8 x
176 rows 0.909 / 0.889. Past the wide tiles' K, 1198 x 8192 x 28672 as 8 x 152 rows ran 0.943
against 0.857, a last wave 88% full: one point, no rule.)

(The table in words: :func:`rule`.)
"""

from __future__ import annotations

from dataclasses import replace

from tilec.ir import ceil_div
from tilec.transforms.knobs import Config
from tilec.transforms.plan import Decomposition, Fixup

MAX_ROWS = 168  # of wgmma's 256: the most rows measured to win where M is cut (cuBLAS's largest)
ONE_TILE_ROWS = 176  # the most rows of a tile holding every row (171 and 175 rows: session 19)
MIN_SPLIT_ROWS = 96  # rows of a tile where M is cut in two or more (2 x 64 lost)
STAGE_BUDGET = {64: 208 * 1024, 128: 160 * 1024}  # shared memory for the stage ring, by BN
MAX_STAGES = 8
HALF_WAVE_K = (2048, 14336)  # the depths the rows tile under half a wave was measured at
HALF_WAVE_SPLIT_K = 7168  # from this depth on it is split in two K parts (below, whole: s19)
DECODE_SHALLOW_K = 2048  # decode rows this shallow: 16x128 tiles, no split (9 x 7168 x 2048: s19)
DECODE_DEEP_K = 28672  # 16x128 in two K parts this deep (6 x 8192 x 28672: session 20)
# rows_tile's rows; past K = 8192 its rows (not a multiple of 128: where the unswapped tiles
# waste rows; 256 x 4096 x 14336, 0.96x unswapped, was not timed swapped) and depth (session 20)
ROWS_M, ROWS_DEEP = (32, 1024), (272, 28672)


def _stages(bm: int, bn: int) -> int:
    """Stages of ``bm x 64`` A and ``bn x 64`` B bf16 boxes that the ring's budget holds (8 at
    most): 104x64 8, 168x64 7, 128x64 8, 80x128 6, 160x128 4, 168x128 4, the stage counts
    measured best.

    >>> [_stages(bm, bn) for bm, bn in ((104, 64), (168, 64), (128, 64), (80, 128), (168, 128))]
    [8, 7, 8, 6, 4]
    """
    return max(2, min(MAX_STAGES, STAGE_BUDGET[bn] // ((bm + bn) * 64 * 2)))


def swapped(bm: int, bn: int) -> Config:
    """The swapped data-parallel kernel with a ``bm x bn`` tile: one consumer warpgroup for 64
    columns, two for 128, the stages the ring holds."""
    return Config(BM=bm, BN=bn, BK=64, WARPS=8 if bn == 64 else 12, STAGES=_stages(bm, bn),
                  SWAP_AB=1)


def rows_tile(M: int, N: int, sms: int) -> tuple[int, int, int] | None:
    """``(BM, BN, row tiles)`` of the swapped data-parallel kernel at M x N: BN 64 or 128, the
    rows cut in ``r`` tiles of ``BM = ceil(M / r)`` rounded up to 8 (at most 168, at least 96,
    or one tile of at most 176 holding every row), at most ``sms`` tiles in all and at least half of that;
    the most tiles, then the least work per tile, then the fewest row tiles (B read fewest
    times). None where no such tile exists.

    >>> rows_tile(200, 4096, 132), rows_tile(333, 4096, 132), rows_tile(320, 7168, 132)
    ((104, 64, 2), (168, 64, 2), (160, 128, 2))
    >>> rows_tile(77, 14336, 132), rows_tile(48, 4608, 132), rows_tile(1024, 1024, 132)
    ((80, 128, 1), (48, 64, 1), (128, 64, 8))
    >>> rows_tile(64, 28672, 132) is None  # more tiles than SMs whatever the cut
    True
    >>> rows_tile(128, 4096, 132), rows_tile(512, 7168, 132), rows_tile(128, 14336, 132)
    (None, None, (128, 128, 1))
    """
    best: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None
    for r in range(1, ceil_div(M, 8) + 1):
        bm = 8 * ceil_div(ceil_div(M, r), 8)
        if bm > (ONE_TILE_ROWS if r == 1 else MAX_ROWS) or (r > 1 and bm < MIN_SPLIT_ROWS):
            continue
        if ceil_div(M, bm) != r:  # the rounding left a tile row empty
            continue
        for bn in (64, 128):
            tiles = r * ceil_div(N, bn)
            if 2 * tiles < sms or tiles > sms:
                continue
            key = (-tiles, bm * bn, r)
            if best is None or key < best[0]:
                best = (key, (bm, bn, r))
    return None if best is None else best[1]


WIDE_ROWS = 168  # rows of the swapped tile past 1024 rows (session 15)
WIDE_MAX_WASTE = 0.025  # rows of the last tile row past M, a share of M
WIDE_MIN_FILL = 0.93  # the last wave's share of the SMs
WIDE_M = (1025, 3400)  # the rows measured
WIDE_K = (3584, 18944)  # the depths measured
# M just past a multiple of 128 (the unswapped tiles' last row at most half used): any of these
# rows, up to 5% of the rows wasted (session 19: 1062, 1700 and 2451 rows; session 20: 1037 rows at
# K = 4096 as 8 x 136 0.860x against the unswapped tile's 0.697x)
RAGGED_ROWS, RAGGED_MAX_WASTE = tuple(range(136, 177, 8)), 0.05


def wide_rows(M: int, N: int, K: int, sms: int) -> tuple[int, int, int, float] | None:
    """``(BM, row tiles, tiles, fill of the last wave)`` where swapped tiles of 128 columns take
    a problem of more than 1024 rows (module docstring), else None: M cut in 168-row tiles with
    at most 2.5% of the rows wasted, or, where M is just past a multiple of 128 (``M % 128`` in
    1..64), in tiles of 136-176 rows with at most 5% wasted; the last wave at least 93% full;
    of those the cut with the fewest rows per SM (waves times BM), then the larger tile.

    >>> wide_rows(1500, 3584, 18944, 132), wide_rows(1062, 4096, 14336, 132)
    ((168, 9, 252, 0.955), (136, 8, 256, 0.97))
    >>> wide_rows(1700, 4096, 14336, 132), wide_rows(2451, 4096, 7168, 132)
    ((144, 12, 384, 0.97), (160, 16, 512, 0.97))
    >>> wide_rows(2048, 4096, 14336, 132) is None  # 128-row tiles fit: 12 x 176 wastes 3%
    True
    >>> wide_rows(1037, 4096, 4096, 132)
    (136, 8, 256, 0.97)
    >>> wide_rows(2048, 4096, 2048, 132) is None  # K under 3584
    True
    """
    if not (WIDE_M[0] <= M <= WIDE_M[1] and WIDE_K[0] <= K <= WIDE_K[1]) or N % 128:
        return None
    ragged = 0 < M % 128 <= 64
    best = None
    for bm in sorted({WIDE_ROWS, *(RAGGED_ROWS if ragged else ())}, reverse=True):
        r = ceil_div(M, bm)
        tiles = r * (N // 128)
        fill = round(tiles / (sms * ceil_div(tiles, sms)), 3)
        waste = RAGGED_MAX_WASTE if ragged else WIDE_MAX_WASTE
        if r * bm - M > waste * M or fill < WIDE_MIN_FILL:
            continue
        if best is None or ceil_div(tiles, sms) * bm < best[0]:
            best = (ceil_div(tiles, sms) * bm, (bm, r, tiles, fill))
    return None if best is None else best[1]


def half_wave(M: int, N: int, K: int, sms: int) -> tuple[int, int] | None:
    """``(BM, K parts)`` of the swapped tile holding every row under half a wave of tiles of 64
    columns (module docstring, :func:`rule`): whole below K = 7168, in two K parts from there
    on; or None.

    >>> half_wave(75, 4096, 7168, 132), half_wave(175, 4096, 14336, 132)
    ((80, 2), (176, 2))
    >>> half_wave(132, 4096, 4096, 132), half_wave(100, 4096, 2048, 132)
    ((136, 1), (104, 1))
    >>> half_wave(100, 8192, 7168, 132) is None  # 128 tiles: rows_tile's
    True
    """
    bm, tiles = 8 * ceil_div(M, 8), ceil_div(N, 64)
    if (M > 32 and bm <= ONE_TILE_ROWS and HALF_WAVE_K[0] <= K <= HALF_WAVE_K[1]
            and sms < 4 * tiles and 2 * tiles < sms):
        return bm, 2 if K >= HALF_WAVE_SPLIT_K else 1
    return None


def rule(M: int, N: int, K: int, sms: int = 132) -> tuple[Config, str] | None:
    """The swapped kernel's config at M x N x K and the rule's name, or None (the unswapped
    rules then apply). Each branch covers only the classes measured (the module's table):

    * decode rows, M <= 16, K <= 2048, more than sms/4 tiles of 128 columns, at most sms:
      16x128, 6 stages, data-parallel;
    * decode rows, M <= 16, K <= 8192, 24 to sms/3 tiles of 256 columns: 16x256 (16 rows on
      wgmma's N), 6 stages, split-K 3 with the deterministic fix-up; fewer than 24 (or K up to
      28672), but more than sms/4 tiles of 128 columns and at most sms/2: 16x128, split-K 2,
      deterministic;
    * 16 < M <= 32, K >= 16384, at most sms/4 tiles of 256 columns: 32x256, 6 stages, two
      consumer warpgroups, split-K 4 with the reduce kernel;
    * 32 <= M <= 1024, K <= 8192, or M <= 272 (not a multiple of 128) and K <= 28672: the
      data-parallel tile of :func:`rows_tile` (one wave of tiles or less, at least half a wave);
    * 32 < M <= ONE_TILE_ROWS, 2048 <= K <= 14336, one row tile of 64 columns making more than
      a quarter of a wave but less than half (N 2176-4160 on 132 SMs): that tile, whole below
      K = 7168, else in two K parts with the deterministic fix-up (:func:`half_wave`);
    * 1024 < M <= 3400, 3584 <= K <= 18944: 168-row tiles of 128 columns (136-176 rows where M
      is just past a multiple of 128 and K >= 7168), data-parallel, where :func:`wide_rows` finds a cut with
      little waste and a full last wave.

    All of them only where B's rows are whole 128-byte lines (N % 64 == 0, B given K x N).

    >>> rule(200, 4096, 7168)[0].short(), rule(1, 6144, 4096)[0].short()
    ('104x64x64 g8 dp s8 w8 swap', '16x256x64 g8 splitk3 deterministic s6 w8 swap')
    >>> rule(1000, 1000, 1000) is None, rule(4096, 4096, 4096) is None
    (True, True)
    >>> rule(1664, 1664, 8192)[0].short()
    '168x128x64 g8 dp s4 w12 swap'
    >>> rule(135, 4096, 7168)[0].short(), rule(132, 4096, 4096)[0].short()
    ('136x64x64 g8 splitk2 deterministic s8 w8 swap', '136x64x64 g8 dp s8 w8 swap')
    >>> rule(9, 7168, 2048)[0].short(), rule(9, 4608, 3584)[0].short()
    ('16x128x64 g8 dp s6 w8 swap', '16x128x64 g8 splitk2 deterministic s6 w8 swap')
    >>> rule(171, 14336, 4096)[0].short(), rule(1062, 4096, 14336)[0].short()
    ('176x128x64 g8 dp s4 w12 swap', '136x128x64 g8 dp s4 w12 swap')

    """
    if N % 64:
        return None
    n256, n128 = ceil_div(N, 256), ceil_div(N, 128)
    if M <= 16 and K <= DECODE_SHALLOW_K and sms < 4 * n128 <= 4 * sms:
        return (Config(BM=16, BN=128, BK=64, WARPS=8, STAGES=6, SWAP_AB=1),
                "cuda swapped: decode rows (M <= 16), shallow K: 16x128, a quarter wave of "
                "tiles or more")
    if M <= 16 and K <= 8192 and n256 >= 24 and 3 * n256 <= sms:
        return (Config(BM=16, BN=256, BK=64, WARPS=8, STAGES=6, SWAP_AB=1,
                       DECOMP=Decomposition.SPLIT_K, SPLITS=3, FIXUP=Fixup.DETERMINISTIC),
                "cuda swapped: decode rows (M <= 16) on wgmma's N, 16x256, split-K 3")
    if M <= 16 and K <= DECODE_DEEP_K and sms < 4 * n128 and 2 * n128 <= sms:
        return (Config(BM=16, BN=128, BK=64, WARPS=8, STAGES=6, SWAP_AB=1,
                       DECOMP=Decomposition.SPLIT_K, SPLITS=2, FIXUP=Fixup.DETERMINISTIC),
                "cuda swapped: decode rows (M <= 16), under 24 tiles of 256 columns: 16x128, "
                "split-K 2")
    if 16 < M <= 32 and K >= 16384 and 4 * n256 <= sms:
        return (Config(BM=32, BN=256, BK=64, WARPS=12, STAGES=6, SWAP_AB=1,
                       DECOMP=Decomposition.SPLIT_K, SPLITS=4, FIXUP=Fixup.REDUCE_KERNEL),
                "cuda swapped: 17-32 rows, deep K: 32x256, split-K 4, reduce kernel")
    if ROWS_M[0] <= M <= ROWS_M[1] and (K <= 8192 or (M <= ROWS_DEEP[0] and M % 128 != 0
                                          and K <= ROWS_DEEP[1])):
        tile = rows_tile(M, N, sms)
        if tile is not None:
            bm, bn, r = tile
            return (swapped(bm, bn),
                    f"cuda swapped: {M} rows as {r} x {bm} on wgmma's N, {bn} columns a tile, "
                    f"one wave of tiles or less")
    if (half := half_wave(M, N, K, sms)) is not None:
        bm, parts = half
        if parts == 1:
            return (swapped(bm, 64),
                    f"cuda swapped: {M} rows as one {bm}-row tile on wgmma's N, 64 columns a "
                    f"tile, under half a wave of tiles")
        return (replace(swapped(bm, 64), DECOMP=Decomposition.SPLIT_K, SPLITS=parts,
                        FIXUP=Fixup.DETERMINISTIC),
                f"cuda swapped: {M} rows as one {bm}-row tile on wgmma's N, 64 columns a tile, "
                f"under half a wave of tiles: split-K {parts}")
    wide = wide_rows(M, N, K, sms)
    if wide is not None:
        bm, r, tiles, fill = wide
        return (swapped(bm, 128),
                f"cuda swapped: {M} rows as {r} x {bm} on wgmma's N, 128 columns a tile, "
                f"{tiles} tiles, the last wave {fill:.0%} full")
    return None
