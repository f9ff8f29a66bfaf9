"""How a consumer warpgroup writes its rows of C (``KernelPlan.epilogue``): straight from
registers ("direct"), through 64x64 swizzled staging boxes and TMA stores ("tma", "tma_tile"),
or packed in registers and stored box by box during the next tile's first k-iterations
("overlap").

The overlapped epilogue: the tile's fp32 accumulators are packed to 16-bit pairs in registers
(pend: half the registers) and the consumer starts the next tile at once.  Each of its first
k-iterations, after issuing its wgmmas, writes one 64x64 box of the packed tile into the
staging ring of the "tma" epilogue and hands it to a TMA store, so the copy engine writes C
while the tensor cores run.  Boxes a unit did not cover go after its k-loop; the last tile's
after the unit loop.  (Stores straight from registers in the k-loop were slower than the
epilogue they hid, 0.83-0.95x: bench/results/cuda_perf_2026-11-23c.json.)
"""

from __future__ import annotations

from tilec.codegen.cuda.printer.shape import BOX_BYTES, Kernel
from tilec.transforms.plan import DType


def overlap_declare(k: Kernel, ind: str) -> list[str]:
    """The overlapped epilogue's state in a consumer: the pending packed tile, its place, the boxes
    stored so far."""
    p = k.plan
    pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2"}[p.c_dtype]
    conv = {DType.BF16: "__floats2bfloat162_rn", DType.FP16: "__floats2half2_rn"}[p.c_dtype]
    return [
        f"{ind}// overlapped epilogue: the last tile, packed, stored in EPI_STEPS boxes of 64x64",
        f"{ind}constexpr int EPI_STEPS = M_SUB * (BN / 64);",
        f"{ind}uint32_t pend[M_SUB][BN / 8][2];",
        f"{ind}int pend_m = 0, pend_n = 0, flushed = EPI_STEPS;  // EPI_STEPS: nothing pending",
        f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
        f"{ind}uint8_t* ebuf = epi + cw * {k.shape.epi_boxes * BOX_BYTES};",
        f"{ind}auto pack = [](float x, float y) {{ {pair} v = {conv}(x, y); uint32_t u; "
        "memcpy(&u, &v, 4); return u; };",
    ]


def overlap_store(ind: str, c: str) -> list[str]:
    """Box ``c`` (a compile-time constant once unrolled) of the pending tile: rows
    ``(c / (BN/64)) * 64``, columns ``(c % (BN/64)) * 64`` of this warpgroup's part."""
    return [
        f"{ind}const int ms = {c} / (BN / 64), q = {c} % (BN / 64);",
        f"{ind}uint8_t* box = ebuf + (epi_count & 1) * {BOX_BYTES};",
        f"{ind}// the store that last read this box (two boxes ago) has finished reading it",
        f"{ind}if (ctid == 0) tilec::tma_store_wait_read<1>();",
        f"{ind}tilec::named_bar_sync(1 + cw, 128);",
        *box_write(ind, "pend[ms][j][h]"),
        f"{ind}tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
        f"{ind}tilec::named_bar_sync(1 + cw, 128);",
        f"{ind}if (ctid == 0) {{",
        f"{ind}  tilec::tma_store(&tmC, box, pend_n + q * 64, pend_m + ms * 64);",
        f"{ind}  tilec::tma_store_commit();",
        f"{ind}}}",
        f"{ind}++epi_count;",
    ]


def overlap_step(ind: str) -> list[str]:
    """Inside the k-loop: store the next box of the pending tile, if any is left."""
    return [
        f"{ind}// one box of the last tile's stores while this k-iteration's wgmmas run",
        f"{ind}if (flushed < EPI_STEPS) {{",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int c = 0; c < EPI_STEPS; ++c) {{",
        f"{ind}    if (c != flushed) continue;",
        *overlap_store(ind + "    ", "c"),
        f"{ind}  }}",
        f"{ind}  ++flushed;",
        f"{ind}}}",
    ]


def overlap_rest(ind: str) -> list[str]:
    """Store the boxes of the pending tile that the k-iterations did not cover."""
    return [
        f"{ind}#pragma unroll",
        f"{ind}for (int c = 0; c < EPI_STEPS; ++c) {{",
        f"{ind}  if (c < flushed) continue;",
        *overlap_store(ind + "  ", "c"),
        f"{ind}}}",
        f"{ind}flushed = EPI_STEPS;",
    ]


def overlap_pack(ind: str) -> list[str]:
    """This tile's accumulators packed to 16-bit pairs: the next pending tile."""
    return [
        f"{ind}pend_m = m0 + cw * WG_M; pend_n = n0;",
        f"{ind}#pragma unroll",
        f"{ind}for (int ms = 0; ms < M_SUB; ++ms) {{",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int j = 0; j < BN / 8; ++j) {{",
        f"{ind}    pend[ms][j][0] = pack(acc[ms][4 * j], acc[ms][4 * j + 1]);",
        f"{ind}    pend[ms][j][1] = pack(acc[ms][4 * j + 2], acc[ms][4 * j + 3]);",
        f"{ind}  }}",
        f"{ind}}}",
        f"{ind}flushed = 0;",
    ]


def epilogue_name(k: Kernel) -> str:
    """The epilogue in words, for the file's header."""
    e = k.epilogue
    if k.shape.tma_store:
        return {"tma_tile": "the whole tile staged in shared memory, TMA stores overlap the next tile",
                "overlap": "packed to 16 bits in registers; during the next tile's first k-iterations, "
                           "one box a k-iteration through two staging boxes -> TMA stores"
                }.get(e, "registers -> two staging boxes -> TMA stores")
    return {"none": "NONE (a measurement: C is not written)"}.get(e, "registers -> global")


def epilogue_tma(k: Kernel, ind: str) -> list[str]:
    """Registers -> 64x64 staging boxes in shared memory (128-byte swizzle: 16-byte chunk
    ``c/8 ^ row%8`` of each 128-byte row, so a warp's 8 rows x 4 threads hit 32 distinct
    banks) -> ``cp.async.bulk.tensor`` stores, which clip ragged M/N edges.

    Ring of two boxes per warpgroup: writing one overlaps the store of the other, but the
    third box waits for the first store to have read its box.  Whole tile ("tma_tile"):
    every box has its own staging, the stores run on while the next tile's MMAs do, and
    only the next epilogue waits (for stores long finished)."""
    p, s = k.plan, k.shape
    pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2"}[p.c_dtype]
    conv = {DType.BF16: "__floats2bfloat162_rn", DType.FP16: "__floats2half2_rn"}[p.c_dtype]
    tile = s.epi_boxes == s.m_sub * p.BN // 64 and k.epilogue == "tma_tile"
    write = box_write(ind + "    ", "pack(acc[ms][4 * j + 2 * h], acc[ms][4 * j + 2 * h + 1])")
    head = [
        f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
        f"{ind}uint8_t* ebuf = epi + cw * {s.epi_boxes * BOX_BYTES};",
        f"{ind}auto pack = [](float x, float y) {{ {pair} v = {conv}(x, y); uint32_t u; "
        "memcpy(&u, &v, 4); return u; };",
    ]
    loop = [f"{ind}#pragma unroll", f"{ind}for (int ms = 0; ms < M_SUB; ++ms) {{",
            f"{ind}  #pragma unroll", f"{ind}  for (int q = 0; q < BN / 64; ++q) {{"]
    store = "tilec::tma_store(&tmC, box, n0 + q * 64, m0 + cw * WG_M + ms * 64);"
    if tile:
        box = f"{ind}    uint8_t* box = ebuf + (ms * (BN / 64) + q) * {BOX_BYTES};"
        return head + [
            f"{ind}// the previous tile's stores have read the staging (they ran during this tile's MMAs)",
            f"{ind}if (ctid == 0) tilec::tma_store_wait_read<0>();",
            f"{ind}tilec::named_bar_sync(1 + cw, 128);",
            *loop, box, *write, f"{ind}  }}", f"{ind}}}",
            f"{ind}tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
            f"{ind}tilec::named_bar_sync(1 + cw, 128);",
            f"{ind}if (ctid == 0) {{",
            *(ind + "  " + ln[len(ind):] for ln in [*loop, box, f"{ind}    {store}",
                                                    f"{ind}  }}", f"{ind}}}"]),
            f"{ind}  tilec::tma_store_commit();",
            f"{ind}}}",
        ]
    return head + [
        *loop,
        f"{ind}    uint8_t* box = ebuf + (epi_count & 1) * {BOX_BYTES};",
        f"{ind}    // the store that last read this box (two boxes ago) has finished reading it",
        f"{ind}    if (ctid == 0) tilec::tma_store_wait_read<1>();",
        f"{ind}    tilec::named_bar_sync(1 + cw, 128);",
        *write,
        f"{ind}    tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
        f"{ind}    tilec::named_bar_sync(1 + cw, 128);",
        f"{ind}    if (ctid == 0) {{",
        f"{ind}      {store}",
        f"{ind}      tilec::tma_store_commit();",
        f"{ind}    }}",
        f"{ind}    ++epi_count;",
        f"{ind}  }}",
        f"{ind}}}",
    ]


def box_write(ind: str, value: str) -> list[str]:
    """The 64x64 box (ms, q) of a warpgroup's tile into the staging ``box``, 128-byte
    swizzled: ``value`` is the packed pair of fragment group ``j`` (= 8q + jj), row half h."""
    return [
        f"{ind}const uint32_t base = tilec::smem_u32(box);",
        f"{ind}#pragma unroll",
        f"{ind}for (int jj = 0; jj < 8; ++jj) {{",
        f"{ind}  const int j = 8 * q + jj;",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int h = 0; h < 2; ++h) {{",
        f"{ind}    const int r = warp * 16 + lane / 4 + 8 * h;",
        f"{ind}    tilec::st_shared_b32(base + r * 128 + ((jj ^ (r & 7)) << 4) + (lane % 4) * 4, {value});",
        f"{ind}  }}",
        f"{ind}}}",
    ]


CTYPE = {DType.BF16: "__nv_bfloat16", DType.FP16: "__half", DType.FP32: "float"}  # C++ element types


def c_conversions(dtype: DType) -> tuple[str, str, str]:
    """C's pair type, the conversion of ``(x, y)`` to a pair, and of one value, for ``dtype``."""
    pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2", DType.FP32: "float2"}[dtype]
    conv = {DType.BF16: "__floats2bfloat162_rn(x, y)", DType.FP16: "__floats2half2_rn(x, y)",
            DType.FP32: "make_float2(x, y)"}[dtype]
    one = {DType.BF16: "__float2bfloat16_rn", DType.FP16: "__float2half_rn", DType.FP32: "float"}[dtype]
    return pair, conv, one


def direct_put(k: Kernel, ind: str) -> list[str]:
    """The direct epilogues' ``put(row, col, x, y)``: C[row][col], C[row][col + 1] as one pair
    where whole and aligned, else one at a time; masked at M and N outside the closed variant."""
    pair, conv, one = c_conversions(k.plan.c_dtype)
    return [
        f"{ind}// the closed variant's tiles are whole (facts_hold: M % BM == 0, N % BN == 0)",
        f"{ind}auto put = [&](int row, int col, float x, float y) {{",
        f"{ind}  if (!FACTS && row >= sh.M) return;",
        f"{ind}  TOut* dst = C + (size_t)row * sh.LDC + col;",
        f"{ind}  // a pair where it is whole and aligned (col is even: an even row stride)",
        f"{ind}  if ((FACTS || col + 1 < sh.N) && sh.LDC % 2 == 0) {{ *reinterpret_cast<{pair}*>(dst) = {conv}; return; }}",
        f"{ind}  if (FACTS || col < sh.N) dst[0] = {one}(x);",
        f"{ind}  if (FACTS || col + 1 < sh.N) dst[1] = {one}(y);",
        f"{ind}}};",
    ]


def epilogue_direct(k: Kernel, ind: str) -> list[str]:
    """Registers -> global memory; wgmma's accumulator layout (PTX ISA, m64nNk16 D fragment):
    value 4j+q of a thread sits at row warp*16 + lane/4 + 8*(q/2), col 8j + 2*(lane%4) + q%2."""
    store = direct_put(k, ind)
    return store + [
        f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
        f"{ind}#pragma unroll",
        f"{ind}for (int ms = 0; ms < M_SUB; ++ms) {{",
        f"{ind}  const int row = m0 + cw * WG_M + ms * 64 + warp * 16 + lane / 4;",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int j = 0; j < BN / 8; ++j) {{",
        f"{ind}    const int col = n0 + 8 * j + 2 * (lane % 4);",
        f"{ind}    put(row, col, acc[ms][4 * j], acc[ms][4 * j + 1]);",
        f"{ind}    put(row + 8, col, acc[ms][4 * j + 2], acc[ms][4 * j + 3]);",
        f"{ind}  }}",
        f"{ind}}}",
    ]
