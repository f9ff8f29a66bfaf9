"""SWAP_AB=1 (``KernelPlan.swap_ab``): each CTA computes its tile as C^T = B^T A^T, as cuBLAS's
small and ragged-M kernels do: our N is wgmma's M (64 rows per instruction) and our M its N
(any multiple of 8 up to 256), so BM fits a ragged M in steps of 8 instead of whole 64-row
slabs.  The stage ring is unchanged (A's BM x BK boxes, B's boxes as in the plain kernel): only
the wgmma operands swap.  Operand A of ``wgmma.m64n{BM}k16`` is a 64-column slab of B's stage
(given K x N: MN-major, the instruction's transpose-A; given N x K: K-major), operand B is A's
stage (K-major).

Consumer warpgroup ``cw`` owns columns ``[cw * WG_N, (cw + 1) * WG_N)`` of the tile, in N_SUB
slabs of 64, and every row: ``acc[N_SUB][BM / 2]``.  Register ``i`` of slab ``ns`` of thread
``ctid`` (warp ``w``, lane ``l``) holds wgmma's D element (PTX ISA, m64nNk16 D fragment) at row
``16 w + l / 4 + 8 ((i / 2) % 2)`` (our n within the slab) and column ``8 (i / 4) + 2 (l % 4) +
i % 2`` (our m): C[m0 + column][n0 + cw * WG_N + ns * 64 + row].

The fix-ups (deterministic, atomic) keep partials in the accumulators' own layout, so they
serve the swapped accumulators as they are (:func:`swapped`); the reduce kernel maps that layout
back to C with the swapped fragment (printer/reduce.py, ``reduce_place``)."""

from __future__ import annotations

from tilec.codegen.cuda.printer.epilogue import direct_put
from tilec.codegen.cuda.printer.shape import Kernel
from tilec.transforms.plan import DType

# the plain kernel's accumulator names -> the swapped kernel's (fix-up, zero partial)
_SWAPPED = (("M_SUB", "N_SUB"), ("WG_M * BN", "WG_N * BM"), ("BN / 2", "BM / 2"),
            ("BN / 8", "BM / 8"), ("m64 row block", "64-column slab"))


def swapped(k: Kernel, text: str) -> str:
    """``text``, printed for the plain accumulators ``acc[M_SUB][BN / 2]``, for the kernel's own
    (``acc[N_SUB][BM / 2]`` with SWAP_AB=1; unchanged otherwise)."""
    if not k.plan.swap_ab:
        return text
    for old, new in _SWAPPED:
        text = text.replace(old, new)
    return text


def swap_mma(k: Kernel, ind: str) -> list[str]:
    """One stage's wgmmas of consumer ``cw``: per k-step, A's stage as operand B (K-major) and
    each of its N_SUB slabs of B's stage as operand A."""
    p = k.plan
    if p.b.transposed:  # B given N x K: slab rows of BK elements, K-major
        slab = "tilec::smem_desc_sw128(b + ns * 64 * BK + kk * 16)"
    else:  # B given K x N: BN / 64 boxes of BK x 64, MN-major (transpose-A)
        slab = "tilec::smem_desc_sw128_mn(b + ns * 64 * BK + kk * 16 * 64, 64 * BK * sizeof(TIn))"
    return [
        f"{ind}const TIn* a = sA + stage * BM * BK;",
        f"{ind}const TIn* b = sB + stage * BN * BK + cw * WG_N * BK;  // this warpgroup's slabs",
        f"{ind}tilec::wgmma_fence();",
        f"{ind}#pragma unroll",
        f"{ind}for (int kk = 0; kk < BK / 16; ++kk) {{",
        f"{ind}  const uint64_t da = tilec::smem_desc_sw128(a + kk * 16);  // wgmma's B: our A, K-major",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int ns = 0; ns < N_SUB; ++ns)",
        f"{ind}    tilec::wgmma_m64n{p.BM}k16(acc[ns], {slab}, da,",
        f"{ind}                          (kb > kb0 || kk > 0) ? 1 : 0);",
        f"{ind}}}",
        f"{ind}tilec::wgmma_commit();",
    ]


# lanes l and l ^ 4 hold columns n and n + 1 (hi = 0, 1) of C's rows m and m + 1 in registers
# 4 j + 2 h and 4 j + 2 h + 1: one shuffle swaps them, so each lane stores one row's pair
# (row SWAP_ROW, columns SWAP_COL and SWAP_COL + 1; D fragment: wgmma's column is our m, its row
# our n)
SWAP_ROW = "m0 + 8 * j + 2 * (lane % 4) + hi"
SWAP_COL = "n0 + cw * WG_N + ns * 64 + warp * 16 + 8 * h + 2 * (lane / 8)"


def _exchange(ind: str) -> list[str]:
    """Registers ``4 j + 2 h`` and ``+ 1`` of slab ``ns`` (our m and m + 1, one n): lanes l and
    l ^ 4 swap one value, so that ``hi ? recv : a``, ``hi ? b : recv`` is row SWAP_ROW's pair
    of columns SWAP_COL, SWAP_COL + 1."""
    return [
        f"{ind}// (m, n) and (m + 1, n); lane ^ 4 holds (m, n ^ 1) and (m + 1, n ^ 1)",
        f"{ind}const float a = acc[ns][4 * j + 2 * h], b = acc[ns][4 * j + 2 * h + 1];",
        f"{ind}const float recv = __shfl_xor_sync(0xffffffffu, hi ? a : b, 4);",
    ]


def epilogue_direct_swap(k: Kernel, ind: str) -> list[str]:
    """Registers -> global memory.  A thread's register pair (4 j + 2 h, + 1) is one column of
    two rows of C (the transposed fragment); lanes l and l ^ 4 exchange one value each
    (``__shfl_xor_sync``), so each stores two adjacent columns of one row (a 4-byte pair where
    whole and aligned, as the plain direct epilogue), masked at M and N in the general
    variant."""
    return [
        *direct_put(k, ind),
        f"{ind}const int warp = ctid / 32, lane = ctid % 32, hi = (lane >> 2) & 1;",
        f"{ind}#pragma unroll",
        f"{ind}for (int ns = 0; ns < N_SUB; ++ns) {{",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int j = 0; j < BM / 8; ++j) {{",
        f"{ind}    #pragma unroll",
        f"{ind}    for (int h = 0; h < 2; ++h) {{",
        *_exchange(ind + "      "),
        f"{ind}      const int row = {SWAP_ROW};  // our m: wgmma's column",
        f"{ind}      const int col = {SWAP_COL};  // our n: wgmma's row",
        f"{ind}      put(row, col, hi ? recv : a, hi ? b : recv);",
        f"{ind}    }}",
        f"{ind}  }}",
        f"{ind}}}",
    ]


def epilogue_tma_swap(k: Kernel, ind: str) -> list[str]:
    """Registers -> a staging box of BM rows x 64 columns per slab (128-byte swizzle: the
    16-byte chunk ``c / 8 ^ r % 8`` of row r) -> one TMA store per slab, which clips at M and N.
    After the direct epilogue's shuffle each lane holds one row's two adjacent columns: one
    4-byte ``st.shared`` (a warp's 32 hit 8 rows x 4 words of 8 distinct chunks: 32 banks).  Two
    boxes per warpgroup in a ring, as the plain "tma" epilogue."""
    p = k.plan
    pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2"}[p.c_dtype]
    conv = {DType.BF16: "__floats2bfloat162_rn", DType.FP16: "__floats2half2_rn"}[p.c_dtype]
    box_bytes = p.BM * 64 * p.c_dtype.nbytes
    return [
        f"{ind}const int warp = ctid / 32, lane = ctid % 32, hi = (lane >> 2) & 1;",
        f"{ind}uint8_t* ebuf = epi + cw * {2 * box_bytes};",
        f"{ind}auto pack = [](float x, float y) {{ {pair} v = {conv}(x, y); uint32_t u; "
        "memcpy(&u, &v, 4); return u; };",
        f"{ind}#pragma unroll",
        f"{ind}for (int ns = 0; ns < N_SUB; ++ns) {{",
        f"{ind}  uint8_t* box = ebuf + (epi_count & 1) * {box_bytes};",
        f"{ind}  // the store that last read this box (two boxes ago) has finished reading it",
        f"{ind}  if (ctid == 0) tilec::tma_store_wait_read<1>();",
        f"{ind}  tilec::named_bar_sync(1 + cw, 128);",
        f"{ind}  const uint32_t base = tilec::smem_u32(box);",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int j = 0; j < BM / 8; ++j) {{",
        f"{ind}    #pragma unroll",
        f"{ind}    for (int h = 0; h < 2; ++h) {{",
        *_exchange(ind + "      "),
        f"{ind}      const int r = 8 * j + 2 * (lane % 4) + hi;  // box row: our m - m0",
        f"{ind}      const int c = warp * 16 + 8 * h + 2 * (lane / 8);  // box column: our n in the slab",
        f"{ind}      tilec::st_shared_b32(base + r * 128 + (((c >> 3) ^ (r & 7)) << 4) + (c & 7) * 2,",
        f"{ind}                           pack(hi ? recv : a, hi ? b : recv));",
        f"{ind}    }}",
        f"{ind}  }}",
        f"{ind}  tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
        f"{ind}  tilec::named_bar_sync(1 + cw, 128);",
        f"{ind}  if (ctid == 0) {{",
        f"{ind}    tilec::tma_store(&tmC, box, n0 + cw * WG_N + ns * 64, m0);",
        f"{ind}    tilec::tma_store_commit();",
        f"{ind}  }}",
        f"{ind}  ++epi_count;",
        f"{ind}}}",
    ]
