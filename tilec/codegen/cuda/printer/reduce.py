"""The reduce-kernel fix-up (``Fixup.REDUCE_KERNEL``, split-K only): every K part of a tile
stores its partial to its own workspace slot with plain stores (no ticket: nobody waits, so the
parts may fill more than one wave), and a second kernel, launched after the GEMM on the same
stream and spread over every SM, sums each element's slots in K order (bitwise repeatable) and
writes C.

The workspace holds, per slot, a group's CLUSTER partial tiles in the accumulators' own layout
(the deterministic fix-up's: float4 ``q`` of consumer thread ``ctid`` of warpgroup ``cw`` of CTA
``rank`` at ``((rank * CONSUMERS + cw) * M_SUB * BN / 8 + q) * 128 + ctid``), so a warp's
stores and the reduce kernel's loads are contiguous.  What the host harness can run (the slot
layout, its inverse, the reduce grid, the reduce kernel's work per float4) is printed in the
schedule section; the kernels and the launch after it."""

from __future__ import annotations

from tilec.codegen.cuda.printer.epilogue import c_conversions
from tilec.codegen.cuda.printer.shape import Kernel
from tilec.codegen.cuda.printer.swap import swapped
from tilec.transforms.plan import Fixup

RED_THREADS = 256  # the reduce kernel's most threads per CTA (halved down to RED_MIN_THREADS)
RED_MIN_THREADS = 64
RED_LOADS = 16  # workspace loads unrolled per step of a reduce thread's K-order sum


def reduced(k: Kernel) -> bool:
    """Whether the file prints the reduce kernel: a split-K plan with Fixup.REDUCE_KERNEL
    (shape.check refuses it for the Stream-K kinds)."""
    return k.partials and k.plan.work.fixup is Fixup.REDUCE_KERNEL


def reduce_schedule(k: Kernel) -> list[str]:
    """Host-compilable: the slot layout (``part_float4``) and its inverse (``reduce_place``:
    wgmma's m64nNk16 D fragment, PTX ISA: value ``4 * jj + i`` of thread ``ctid`` sits at row
    ``warp * 16 + lane / 4 + 8 * (i / 2)``, column ``8 * jj + 2 * (lane % 4) + i % 2`` of its
    64-row block ``ms``, ``q = ms * BN / 8 + jj``), the reduce kernel's grid, and its work per
    float4 (``reduce_float4``, over a load and a store the caller gives)."""
    return [swapped(k, ln) for ln in [
        "// Fixup.REDUCE_KERNEL: slot s of the fp32 workspace holds a group's CLUSTER partial tiles,",
        "// PART_FLOAT4S float4s from float4 s * PART_FLOAT4S, in the accumulators' own layout",
        "constexpr int PART_FLOAT4S = CLUSTER * BM * BN / 4;",
        "// float4 q of consumer thread ctid (warpgroup cw, CTA rank) within its slot",
        "TILEC_HD int part_float4(int rank, int cw, int q, int ctid) {",
        "  return ((rank * CONSUMERS + cw) * (M_SUB * (BN / 8)) + q) * 128 + ctid;",
        "}",
        *(swap_place() if k.plan.swap_ab else [
            "// the inverse: float4 e of a slot -> the CTA rank and the tile element (r, c) of its .x (wgmma's",
            "// D fragment); .y is (r, c + 1), .z (r + 8, c), .w (r + 8, c + 1)",
            "TILEC_HD void reduce_place(int e, int& rank, int& r, int& c) {",
            "  const int per_cta = BM * BN / 4, per_wg = WG_M * BN / 4;",
            "  rank = e / per_cta;",
            "  const int cw = e % per_cta / per_wg, i = e % per_wg;",
            "  const int q = i / 128, ctid = i % 128, warp = ctid / 32, lane = ctid % 32;",
            "  r = cw * WG_M + (q / (BN / 8)) * 64 + warp * 16 + lane / 4;",
            "  c = 8 * (q % (BN / 8)) + 2 * (lane % 4);",
            "}"]),
        f"// the reduce kernel's launch: one thread per float4 of a slot's partials; {RED_THREADS} threads per",
        f"// CTA, halved (down to {RED_MIN_THREADS}) until there are two CTAs per SM; at most a full wave of CTAs",
        "// (the kernel strides over the rest)",
        "inline void reduce_grid(const Shape& sh, int sms, int& blocks, int& threads) {",
        "  const long long total = (long long)sh.GROUPS * PART_FLOAT4S;",
        f"  threads = {RED_THREADS};",
        f"  while (threads > {RED_MIN_THREADS} && (total + threads - 1) / threads < 2LL * sms) threads /= 2;",
        "  const long long want = (total + threads - 1) / threads, wave = (long long)sms * (2048 / threads);",
        "  blocks = (int)(want < wave ? want : wave);",
        "}",
        "#if defined(__CUDACC__)",
        "#define TILEC_UNROLL _Pragma(\"unroll\")",
        "#else",
        "#define TILEC_UNROLL",
        "#endif",
        f"constexpr int RED_LOADS = {RED_LOADS};  // workspace loads unrolled per step of the K-order sum",
        "// reduce_kernel's work for float4 p (< GROUPS * PART_FLOAT4S) of the partials: its group f's slots",
        "// read by load(float4 index) -> F4 and summed in K order (fix_slot(f, 0), += fix_slot(f, 1), ...),",
        "// then put(row, col, two, x, y) for C's rows r and r + 8 of its tile below M (two: col + 1 < N",
        "// too); nothing for a dead tile or one past N; LOADS slots loaded at once",
        "template <class F4, int LOADS = RED_LOADS, class Load, class Put>",
        "TILEC_HD void reduce_float4(const Shape& sh, long long p, const Load& load, const Put& put) {",
        "  const int f = (int)(p / PART_FLOAT4S), e = (int)(p % PART_FLOAT4S);",
        "  int rank, r, c;",
        "  reduce_place(e, rank, r, c);",
        "  const int t = f * CLUSTER + rank;",
        "  if (!sh.tile_alive(t)) return;  // a dead tile: nothing was stored",
        "  const int row = sh.tile_m(t) * BM + r, col = sh.tile_n(t) * BN + c;",
        "  if (row >= sh.M || col >= sh.N) return;",
        "  const int cnt = sh.contributors(f);",
        "  F4 s = load((long long)sh.fix_slot(f, 0) * PART_FLOAT4S + e);",
        "  for (int o = 1; o < cnt; o += LOADS) {",
        "    F4 x[LOADS];",
        "    TILEC_UNROLL",
        "    for (int b = 0; b < LOADS; ++b)  // (past the last slot: the last again, not added)",
        "      x[b] = load((long long)sh.fix_slot(f, o + b < cnt ? o + b : cnt - 1) * PART_FLOAT4S + e);",
        "    TILEC_UNROLL",
        "    for (int b = 0; b < LOADS; ++b)",
        "      if (o + b < cnt) { s.x += x[b].x; s.y += x[b].y; s.z += x[b].z; s.w += x[b].w; }",
        "  }",
        *(["  // SWAP_AB: .x (row, col), .y (row + 1, col), .z (row, col + 8), .w (row + 1, col + 8)",
            "  const bool down = row + 1 < sh.M;",
            "  put(row, col, false, s.x, 0.f);",
            "  if (down) put(row + 1, col, false, s.y, 0.f);",
            "  if (col + 8 < sh.N) {",
            "    put(row, col + 8, false, s.z, 0.f);",
            "    if (down) put(row + 1, col + 8, false, s.w, 0.f);",
            "  }"] if k.plan.swap_ab else [
            "  const bool two = col + 1 < sh.N;",
            "  put(row, col, two, s.x, s.y);",
            "  if (row + 8 < sh.M) put(row + 8, col, two, s.z, s.w);"]),
        "}",
    ]]


def partial_store_function(k: Kernel) -> str:
    """The main kernel's side: a warpgroup's partial to its slot (coalesced ``__stcg``), nothing
    else (no barrier, no ticket: the kernel boundary orders it before the reduce kernel)."""
    return swapped(k, "\n".join([
        "namespace " + k.cname + " {",
        "// Fixup.REDUCE_KERNEL: this unit's partial to its own slot; reduce_kernel sums the slots",
        "__device__ __forceinline__ void partial_store(const Shape& sh, const float (&acc)[M_SUB][BN / 2], float* ws,",
        "                                              int worker, int j, int g, int rank, int cw, int ctid) {",
        "  int f, ord, cnt, slot;",
        "  sh.fix_of(worker, j, g, f, ord, cnt, slot);",
        "  (void)f; (void)ord; (void)cnt;",
        "  float4* mine = reinterpret_cast<float4*>(ws) + (long long)slot * PART_FLOAT4S + part_float4(rank, cw, 0, ctid);",
        "  constexpr int Q = BN / 8;  // float4s per m64 row block",
        "  #pragma unroll",
        "  for (int q = 0; q < M_SUB * Q; ++q) {",
        "    const float* v = &acc[q / Q][4 * (q % Q)];",
        "    __stcg(mine + q * 128, make_float4(v[0], v[1], v[2], v[3]));",
        "  }",
        "}",
        "}  // namespace",
    ]))


def swap_place() -> list[str]:
    """SWAP_AB=1's ``reduce_place``: float4 ``q = ns * BM / 8 + jj`` of consumer thread ``ctid``
    holds registers ``4 jj .. 4 jj + 3`` of slab ``ns`` (D fragment: wgmma's row is our n, its
    column our m), so its .x is tile row ``8 jj + 2 (lane % 4)``, column ``cw * WG_N + ns * 64 +
    16 warp + lane / 4``; .y the next row, .z eight columns on, .w both."""
    return [
        "// the inverse: float4 e of a slot -> the CTA rank and the tile element (r, c) of its .x (wgmma's",
        "// D fragment, swapped: its rows are our columns); .y is (r + 1, c), .z (r, c + 8), .w (r + 1, c + 8)",
        "TILEC_HD void reduce_place(int e, int& rank, int& r, int& c) {",
        "  const int per_cta = BM * BN / 4, per_wg = WG_N * BM / 4;",
        "  rank = e / per_cta;",
        "  const int cw = e % per_cta / per_wg, i = e % per_wg;",
        "  const int q = i / 128, ctid = i % 128, warp = ctid / 32, lane = ctid % 32;",
        "  c = cw * WG_N + (q / (BM / 8)) * 64 + warp * 16 + lane / 4;",
        "  r = 8 * (q % (BM / 8)) + 2 * (lane % 4);",
        "}",
    ]


def partial_store_call() -> str:
    """The consumer's call of :func:`partial_store_function`."""
    return "partial_store(sh, acc, ws, worker, j, g, rank, cw, ctid)"


def reduce_kernel_function(k: Kernel) -> str:
    """``reduce_kernel(C, ws, sh)``: one thread per float4 of a group's partial (grid-stride),
    each the schedule section's ``reduce_float4`` (the host harness runs the same function):
    its four elements' slots summed in K order (``fix_slot(f, 0)``, then ``+= fix_slot(f, 1)``,
    ...; RED_LOADS loads unrolled), converted to C's type and stored where the direct epilogue
    would: rows past M and columns past N masked (ragged edges), dead tiles skipped, a pair
    where whole and C's base and row stride keep it aligned, else one element at a time."""
    return "\n".join([
        "#include <cstdlib>",
        "namespace " + k.cname + " {",
        "// The second kernel of Fixup.REDUCE_KERNEL (after gemm_kernel, same stream): C = the sum of",
        "// each element's partials in K order (bitwise repeatable), over every SM.",
        f"__global__ void __launch_bounds__({RED_THREADS})",
        "reduce_kernel(TOut* __restrict__ C, const float* __restrict__ ws, const Shape sh) {",
        "  // launched early (programmatic dependent launch): gemm_kernel's grid done, its stores visible",
        "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");",
        "  const float4* w4 = reinterpret_cast<const float4*>(ws);",
        "  const long long total = (long long)sh.GROUPS * PART_FLOAT4S;",
        "  const auto load = [&](long long i) { return __ldcs(w4 + i); };",
        *reduce_put(k, "  "),
        "  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total;",
        "       p += (long long)gridDim.x * blockDim.x)",
        "    reduce_float4<float4>(sh, p, load, put);",
        "}",
        "",
        "// Programmatic dependent launch of reduce_kernel (its CTAs scheduled while gemm_kernel's last",
        "// ones run; griddepcontrol.wait holds them until it is done): on unless TILEC_CUDA_PDL=0.",
        *env_switch("use_pdl", "TILEC_CUDA_PDL", None),
        "",
        "// The SMs of the current device (the reduce kernel's grid), kept per device.",
        "static int device_sms() {",
        "  static int sms[64] = {0};",
        "  int dev = 0;",
        "  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return 132;",
        "  if (sms[dev] <= 0 && cudaDeviceGetAttribute(&sms[dev], cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)",
        "    sms[dev] = 132;",
        "  return sms[dev];",
        "}",
        "}  // namespace",
    ])


def reduce_put(k: Kernel, ind: str) -> list[str]:
    """``put(row, col, two, x, y)`` of a summed float4's two values (``reduce_float4``): C[row][col]
    and, where ``two``, C[row][col + 1], as one pair where C's base and row stride keep it aligned,
    else one at a time (``reduce_float4`` masks rows and columns past M and N)."""
    pair, conv, one = c_conversions(k.plan.c_dtype)
    return [
        f"{ind}// a pair where C's base and row stride keep (col, col + 1) aligned (col is even)",
        f"{ind}const bool pairs = sh.LDC % 2 == 0 && reinterpret_cast<uintptr_t>(C) % sizeof({pair}) == 0;",
        f"{ind}const auto put = [&](int row, int col, bool two, float x, float y) {{",
        f"{ind}  TOut* dst = C + (size_t)row * sh.LDC + col;",
        f"{ind}  if (pairs && two) {{ *reinterpret_cast<{pair}*>(dst) = {conv}; return; }}",
        f"{ind}  dst[0] = {one}(x);",
        f"{ind}  if (two) dst[1] = {one}(y);",
        f"{ind}}};",
    ]


def env_switch(fn: str, var: str, what: str | None) -> list[str]:
    """``static bool fn()``: on unless the environment sets ``var`` to 0 (read once)."""
    return [
        *([f"// {what}: on unless {var}=0."] if what else []),
        f"static bool {fn}() {{",
        f"  static const int on = [] {{ const char* e = std::getenv(\"{var}\"); return e && e[0] == '0' ? 0 : 1; }}();",
        "  return on != 0;",
        "}",
    ]


def reduce_launch(ind: str = "  ") -> list[str]:
    """The launcher's lines after gemm_kernel's launch: the reduce kernel where the launch cut
    tiles into K parts (``splits > 1``; with one part gemm_kernel wrote C itself)."""
    return [
        f"{ind}if (cudaError_t e = cudaGetLastError()) return (int)e;",
        f"{ind}if (splits > 1) {{  // the partials' sum in K order: reduce_kernel",
        f"{ind}  int blocks = 0, threads = 0;",
        f"{ind}  reduce_grid(sh, device_sms(), blocks, threads);",
        f"{ind}  cudaLaunchConfig_t cfg = {{}};",
        f"{ind}  cfg.gridDim = dim3(blocks, 1, 1); cfg.blockDim = dim3(threads, 1, 1);",
        f"{ind}  cfg.dynamicSmemBytes = 0; cfg.stream = (cudaStream_t)stream;",
        f"{ind}  cudaLaunchAttribute attr[1];",
        f"{ind}  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;",
        f"{ind}  attr[0].val.programmaticStreamSerializationAllowed = 1;",
        f"{ind}  cfg.attrs = attr; cfg.numAttrs = use_pdl() ? 1 : 0;",
        f"{ind}  if (cudaError_t e = cudaLaunchKernelEx(&cfg, reduce_kernel, static_cast<TOut*>(C),",
        f"{ind}                                         static_cast<const float*>(ws), sh)) return (int)e;",
        f"{ind}}}",
    ]
