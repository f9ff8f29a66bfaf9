"""The warp-tiled SIMT SGEMM (CUTLASS hierarchy, seed 003): block tile, warp tile, thread tile.

``tilec.transforms.simt.hierarchy.warp_tiled`` writes the hierarchy with the IR's verbs: a CTA computes a
``BM x BN`` tile of C (``BIDy``, ``BIDx``); its ``(BM/WM) x (BN/WN)`` warps each a ``WM x WN``
tile; each lane a ``TM x TN`` register tile cut into 4-element vectors spread over the warp tile
(so a warp's 128-bit reads of a k-slice are one contiguous run).  K tiles of ``BK`` reach shared
memory through ``STAGES`` buffers filled by ``cp.async`` (``ASYNC``; A stored transposed), read
into two register buffers of the k-slice (``FRAGMENTS``); ``MIN_BLOCKS`` CTAs per SM cap the
registers (``__launch_bounds__``).  ``INTERLEAVE`` 2 orders a warp's lanes as CUTLASS's
``RowMajorInterleaved<2>`` (lane bit 0 picks the row, bit 1 the column), so that both k-slice
reads are paired 128-bit loads: half the shared-memory wavefronts of the B reads.  ``FMA_ORDER``
orders a k-slice's FMAs over the thread tile (``tilec.ir.threads.FMA_ORDERS``): ``snake_rows``
lets every FFMA share an operand with the one before, so fewer read three registers.
``LANES_A`` (``fusion.copy_lanes``) gives a warp of A's tile copy ``32 / LANES_A`` rows of
``LANES_A`` k (0: a whole row of the K tile); ``SPREAD`` (``fusion.spread_copies``) issues the
next tile's ``cp.async`` copies over the first ``SPREAD`` k-slices instead of all at once;
``SWIZZLE`` 1 (``fusion.smem_swizzle("A")``) rotates the elements of each 128-bit vector of A's
transposed shared rows by ``k // 8``, so that a warp's 4-byte copies of 32 k of one row hit 32
banks (the ``large`` row: 1.7% faster at 4096^3 on the H200, docs/coalescing.md).  ``ADDR``
(``fusion.copy_addresses``): ``stride`` makes each ``cp.async`` copy's global address one wide
multiply-add of a stride the kernel takes as an argument (``index``: an add and a wide
multiply-add of its whole element index); the ``large`` row's 16 copies of A, rows 8 apart,
are too far apart for LDGSTS' immediate offsets.

``DECOMP`` (``fusion.decompose``; empty: the row's choice, :func:`decomposition`): ``dp`` (one
CTA per tile), ``dp_ft`` (whole waves one CTA per tile; the last, partial wave's tiles cut at one
K index: their fronts on as many CTAs, walking K together, their tails streamed over the wave's
other CTAs), ``splitk`` (``SPLITS`` K parts), ``streamk``, ``dp_1sk`` (the partial wave's tiles in
Stream-K over every slot), ``sk2_dp``, ``skpp`` (``SK_WAVES`` waves of Stream-K; 0: a persistent data-parallel grid);
``FIXUP`` ``deterministic`` or ``atomic`` (empty: atomic for ``dp_ft``, the partials added
into C, else deterministic); the Stream-K
family spreads its work over ``SMS_SLOTS`` CTAs (0: ``SMS`` x the row's CTAs per SM, one wave).

``RASTER`` (``warp_tiled``'s ``raster``): ``n`` walks the tile columns fastest (``BIDx`` over N's
tiles), ``m`` the tile rows, so that a wave's CTAs share B's tiles; ``auto``: :func:`raster`
(``m`` where B dwarfs A and A stays in L2).

``STAGE_C`` (``fusion.stage_c``): ``auto`` lets lowering stage the epilogue through shared memory
where C's stores are 32-bit (the ``ragged_n`` and ``general`` variants: a warp's stores then cover
consecutive columns), ``on`` stages every variant whose tile fits, ``off`` none.

``CONFIG`` picks a row of ``CONFIGS`` (``auto``: the row and split the SIMT cost model expects
fastest at the problem, see :func:`choice`; it weighs the rows with a fitted rate); a size given
as a parameter overrides the row's.

    tilec gen examples/simt_warp_tiled.py --target cuda --param M=8192 --param N=8192 --param K=8192
"""

from __future__ import annotations

from tilec.ir import GemmFusion

PARAMS = dict(M=4096, N=4096, K=4096, CONFIG="auto", BM=0, BN=0, BK=0, WM=0, WN=0, TM=0, TN=0,
              MIN_BLOCKS=-1, STAGES=0, FRAGMENTS=0, ASYNC=-1, PAD_A=-1, INTERLEAVE=0,
              FMA_ORDER="", LANES_A=0, SPREAD=0, SWIZZLE=-1, ADDR="", DECOMP="", SPLITS=1,
              FIXUP="", SMS_SLOTS=0, SK_WAVES=1, RASTER="auto",
              STAGE_C="auto")

KEYS = ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "MIN_BLOCKS", "STAGES", "FRAGMENTS", "ASYNC",
        "INTERLEAVE", "FMA_ORDER", "LANES_A", "SPREAD", "SWIZZLE", "ADDR")
CONFIGS = {  # BM BN BK WM WN TM TN CTAs/SM stages frags async lanes FMA order  A copy spread swz addr
    "large": (128, 128, 32, 32, 64, 8, 8, 2, 3, 2, 1, 2, "snake_rows", 0, 1, 1, "stride"),  # 8 warps
    "small8": (64, 64, 8, 32, 64, 8, 8, 0, 3, 1, 1, 2, "rows", 0, 1, 0, "index"),  # fine last wave
    "small16": (64, 64, 16, 32, 32, 8, 4, 0, 3, 2, 1, 2, "rows", 0, 1, 0, "index"),  # 4 warps of 32x32
    # the large row's variants the cost model weighs once measured (bench_simt.py --explore-model)
    "large_w": (128, 128, 32, 64, 32, 8, 8, 2, 3, 2, 1, 2, "snake_rows", 0, 1, 1, "stride"),  # warps 64x32
    "large_k16": (128, 128, 16, 32, 64, 8, 8, 2, 4, 2, 1, 2, "snake_rows", 0, 1, 1, "stride"),
    "tall": (256, 128, 16, 64, 64, 8, 16, 1, 3, 2, 1, 2, "snake_rows", 0, 1, 1, "stride"),  # cuBLAS's
    "wide": (128, 256, 16, 64, 64, 8, 16, 1, 3, 2, 1, 2, "snake_rows", 0, 1, 1, "stride"),
    "mid3": (128, 64, 32, 32, 64, 8, 8, 3, 3, 2, 1, 2, "snake_rows", 0, 1, 1, "stride"),  # 3 CTAs/SM
}
SMS = 132  # H100 and H200
# CTAs per SM (ptxas: 124, 130, 95, 128, 121, 218, 214, 162 registers at most)
CTAS = {"large": 2, "small8": 7, "small16": 5, "large_w": 2, "large_k16": 2, "tall": 1, "wide": 1,
        "mid3": 3}


def rows(fitted: bool = True) -> list:
    """The rows as the cost model sees them (``tilec.transforms.simt.cost.Row``): with
    ``fitted``, only those the model has a measured rate for (what ``auto`` weighs)."""
    from tilec.transforms.simt.cost import DEFAULT, Row

    out = []
    for name, v in CONFIGS.items():
        c = dict(zip(KEYS, v, strict=True))
        warps = (c["BM"] // c["WM"]) * (c["BN"] // c["WN"])
        if name in DEFAULT.rate or not fitted:
            out.append(Row(name, c["BM"], c["BN"], c["BK"], warps=warps, ctas=CTAS[name],
                           WM=c["WM"], WN=c["WN"], stages=c["STAGES"]))
    return out


def choice(M: int, N: int, K: int) -> tuple[str, str, int]:
    """``(row, decomp, splits)`` for ``M x N x K``: what ``tilec.transforms.simt.cost``
    expects fastest: waves of tiles over ``SMS`` SMs, the last wave's fill, the K loop, the
    tile loads a wave streams from DRAM, each row's measured throughput (docs/coalescing.md,
    "A cost model")."""
    from tilec.transforms.simt.cost import pick

    return pick(M, N, K, rows())


def config(M: int, N: int, K: int) -> str:
    """The row for ``M x N x K`` (:func:`choice`'s)."""
    return choice(M, N, K)[0]


def schedule(M: int, N: int, K: int, CONFIG: str = "auto", BM: int = 0, BN: int = 0,
             BK: int = 0, WM: int = 0, WN: int = 0, TM: int = 0, TN: int = 0,
             MIN_BLOCKS: int = -1, STAGES: int = 0, FRAGMENTS: int = 0, ASYNC: int = -1,
             PAD_A: int = -1, INTERLEAVE: int = 0, FMA_ORDER: str = "", LANES_A: int = 0,
             SPREAD: int = 0, SWIZZLE: int = -1, ADDR: str = "", DECOMP: str = "",
             SPLITS: int = 1, FIXUP: str = "", SMS_SLOTS: int = 0,
             SK_WAVES: int = 1, RASTER: str = "auto", STAGE_C: str = "auto") -> GemmFusion:
    from tilec.errors import ParamError
    from tilec.transforms.simt.hierarchy import warp_tiled

    name = config(M, N, K) if CONFIG == "auto" else CONFIG
    if name not in CONFIGS:
        raise ParamError(f"simt_warp_tiled: CONFIG must be auto or one of {', '.join(CONFIGS)} "
                         f"but got {CONFIG!r}")
    given = dict(BM=BM, BN=BN, BK=BK, WM=WM, WN=WN, TM=TM, TN=TN, MIN_BLOCKS=MIN_BLOCKS,
                 STAGES=STAGES, FRAGMENTS=FRAGMENTS, ASYNC=ASYNC, INTERLEAVE=INTERLEAVE,
                 FMA_ORDER=FMA_ORDER, LANES_A=LANES_A, SPREAD=SPREAD, SWIZZLE=SWIZZLE, ADDR=ADDR)
    unset = {"MIN_BLOCKS": -1, "ASYNC": -1, "FMA_ORDER": "", "SWIZZLE": -1, "ADDR": ""}  # 0 is a value too
    c = dict(zip(KEYS, CONFIGS[name], strict=True))
    c.update({k: v for k, v in given.items() if v != unset.get(k, 0)})
    fusion = GemmFusion(M, N, K, dtype="fp32")
    warp_tiled(fusion, (c["BM"], c["BN"], c["BK"]), (c["WM"], c["WN"]), (c["TM"], c["TN"]),
               interleave=c["INTERLEAVE"], raster=raster(M, N, K) if RASTER == "auto" else RASTER)
    fusion.circular_buffer(c["STAGES"], fragments=c["FRAGMENTS"], async_copy=bool(c["ASYNC"]))
    if PAD_A >= 0:
        fusion.smem_pad("A", PAD_A)
    if c["MIN_BLOCKS"]:
        fusion.min_blocks_per_sm(c["MIN_BLOCKS"])
    fusion.fma_order(c["FMA_ORDER"])
    if c["LANES_A"]:
        fusion.copy_lanes("A", c["LANES_A"])
    if c["SPREAD"] > 1:
        fusion.spread_copies(c["SPREAD"])
    if c["SWIZZLE"]:
        fusion.smem_swizzle("A")
    if c["ADDR"] != "index" and (c["ASYNC"] or ADDR):  # the row's choice is for cp.async copies
        fusion.copy_addresses(c["ADDR"])
    if STAGE_C not in ("auto", "on", "off"):
        raise ParamError(f"simt_warp_tiled: STAGE_C must be auto, on or off but got {STAGE_C!r}")
    if STAGE_C != "auto":
        fusion.stage_c(STAGE_C == "on")
    slots = SMS_SLOTS or SMS * max(c["MIN_BLOCKS"], 1)
    decomp, splits = ((DECOMP, SPLITS) if DECOMP else decomposition(name, M, N, K) if c["ASYNC"]
                      else ("dp", 1))  # a split walks cp.async stages
    if decomp != "dp":
        fusion.decompose(decomp, splits=splits, sk_waves=SK_WAVES,
                         fixup=FIXUP or ("atomic" if decomp == "dp_ft" else "deterministic"),
                         sms=slots)
    return fusion


A_IN_L2 = 25 * 10**6  # bytes of A (fp32) that stay in half of an H100's / H200's 50 MB L2


def raster(M: int, N: int, K: int) -> str:
    """``m`` (tile rows walked fastest, a wave's CTAs share B's tiles) where N >= 8 M and A's
    ``4 M K`` bytes fit in half the L2 (every A tile stays there while B streams past once),
    else ``n``. On the H200 (x cuBLAS SGEMM, m against n): 1024 x 32000 x 4096 1.020 / 0.998 and
    2048 x 50257 x 768 0.909 / 0.904 (bench/results/simt_raster_h200_2026-11-28_s14.json, 5
    rounds), 0.965 / 0.948 with the staged C epilogue (simt_stage_c_raster_..._s14.json); in an
    exploration over the 17 SIMT shapes (simt_raster_explore_..._s14.json, shorter timing) the
    four shapes this picks ran within 1% of ``n`` but gpt2 (2.4% behind), and ``m`` was 1.6%
    behind at 2048 x 8192 x 1024 (N = 4 M), which keeps ``n``.

    >>> raster(2048, 50257, 768), raster(1024, 32000, 4096), raster(2048, 8192, 1024)
    ('m', 'm', 'n')
    """
    return "m" if N >= 8 * M and 4 * M * K <= A_IN_L2 else "n"


def decomposition(row: str, M: int, N: int, K: int) -> tuple[str, int]:
    """The row's work split and its K parts where ``DECOMP`` is left empty: of the splits the
    cost model offers (``cost.OFFERED``: one CTA per tile, ``dp_ft``: the partial last wave's
    fronts and tails, partials added into C), the one it expects fastest for this row.  (A
    register-staged pipeline, ``ASYNC=0``, keeps ``dp``: a split walks cp.async stages.)"""
    from tilec.transforms.simt.cost import choices

    r = next(r for r in rows(fitted=False) if r.name == row)
    _, _, decomp, splits = choices(M, N, K, [r])[0]
    return decomp, splits


if __name__ == "__main__":
    from tilec.app.cli import main

    raise SystemExit(main(["show", __file__, *__import__("sys").argv[1:]]))
