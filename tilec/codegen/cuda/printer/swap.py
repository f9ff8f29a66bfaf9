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
serve the swapped accumulators as they are (:func:`swapped`); the reduce kernel, which maps
that layout back to C, is refused (shape.swap_warpgroups)."""

from __future__ import annotations

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


# register 4 j + q of slab ns: C's element (ROW + M_OF[q], COL + N_OF[q]) -- from the D
# fragment: q % 2 steps wgmma's column (our m), q / 2 its row by 8 (our n)
SWAP_ROW = "m0 + 8 * j + 2 * (lane % 4)"
SWAP_COL = "n0 + cw * WG_N + ns * 64 + warp * 16 + lane / 4"
M_OF = (0, 1, 0, 1)
N_OF = (0, 0, 8, 8)


def epilogue_direct_swap(k: Kernel, ind: str) -> list[str]:
    """Registers -> global memory, one element a store (C's rows are our m: a thread's
    registers hold a column pair of the transposed tile), masked at M and N in the general
    variant."""
    p = k.plan
    one = {DType.BF16: "__float2bfloat16_rn", DType.FP16: "__float2half_rn",
           DType.FP32: "float"}[p.c_dtype]
    out = [
        f"{ind}// the closed variant's tiles are whole (facts_hold: M % BM == 0, N % BN == 0)",
        f"{ind}auto put = [&](int row, int col, float x) {{",
        f"{ind}  if (!FACTS && (row >= sh.M || col >= sh.N)) return;",
        f"{ind}  C[(size_t)row * sh.LDC + col] = {one}(x);",
        f"{ind}}};",
        f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
        f"{ind}#pragma unroll",
        f"{ind}for (int ns = 0; ns < N_SUB; ++ns) {{",
        f"{ind}  const int col = {SWAP_COL};  // our n: wgmma's row",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int j = 0; j < BM / 8; ++j) {{",
        f"{ind}    const int row = {SWAP_ROW};  // our m: wgmma's column",
    ]
    out += [f"{ind}    put(row{f' + {dm}' if dm else ''}, col{f' + {dn}' if dn else ''}, "
            f"acc[ns][4 * j + {q}]);" for q, (dm, dn) in enumerate(zip(M_OF, N_OF, strict=True))]
    return [*out, f"{ind}  }}", f"{ind}}}"]


def epilogue_tma_swap(k: Kernel, ind: str) -> list[str]:
    """Registers -> a staging box of BM rows x 64 columns per slab (128-byte swizzle: the
    16-byte chunk ``c / 8 ^ m % 8`` of row m; a warp's 2-byte stores of one register hit 16
    distinct banks) -> one TMA store per slab, which clips at M and N.  Two boxes per
    warpgroup in a ring, as the plain "tma" epilogue."""
    p = k.plan
    one = {DType.BF16: "__float2bfloat16_rn", DType.FP16: "__float2half_rn"}[p.c_dtype]
    box_bytes = p.BM * 64 * p.c_dtype.nbytes
    return [
        f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
        f"{ind}uint8_t* ebuf = epi + cw * {2 * box_bytes};",
        f"{ind}#pragma unroll",
        f"{ind}for (int ns = 0; ns < N_SUB; ++ns) {{",
        f"{ind}  uint8_t* box = ebuf + (epi_count & 1) * {box_bytes};",
        f"{ind}  // the store that last read this box (two boxes ago) has finished reading it",
        f"{ind}  if (ctid == 0) tilec::tma_store_wait_read<1>();",
        f"{ind}  tilec::named_bar_sync(1 + cw, 128);",
        f"{ind}  #pragma unroll",
        f"{ind}  for (int j = 0; j < BM / 8; ++j) {{",
        f"{ind}    #pragma unroll",
        f"{ind}    for (int q = 0; q < 4; ++q) {{",
        f"{ind}      const int r = 8 * j + 2 * (lane % 4) + (q & 1);  // box row: our m - m0",
        f"{ind}      const int c = warp * 16 + lane / 4 + 8 * (q >> 1);  // box column: our n in the slab",
        f"{ind}      *reinterpret_cast<TOut*>(box + r * 128 + (((c >> 3) ^ (r & 7)) << 4) + (c & 7) * 2) =",
        f"{ind}          {one}(acc[ns][4 * j + q]);",
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
