"""The ``.cu`` file of one plan: :class:`CudaPrinter` checks the plan and assembles the
sections (header, constants, schedule functions, device helpers, fix-up, kernel, host
launcher); :func:`emit` is the backend's entry point."""

from __future__ import annotations

import re

import sympy

from tilec.codegen.cuda.printer.epilogue import epilogue_name
from tilec.codegen.cuda.printer.mainloop import kernel_function
from tilec.codegen.cuda.printer.reduce import (
    partial_store_function,
    reduce_kernel_function,
    reduce_launch,
    reduced,
)
from tilec.codegen.cuda.printer.schedule import SCHEDULE_END, evict_where, schedule_functions
from tilec.codegen.cuda.printer.shape import BOX_BYTES, Kernel, KernelShape, check
from tilec.codegen.cuda.printer.spread import (
    spread,
    spread_helpers,
    spread_launch,
    spread_sum_function,
)
from tilec.codegen.cuda.printer.work import (
    fixup_function,
    order_ctas_fixed,
    partials,
    work_constants,
    workspace,
)
from tilec.codegen.cuda.runtime import (
    DEVICE_HELPERS,
    FASTDIV_HELPERS,
    INDEX_HELPERS,
    wgmma_function,
)
from tilec.errors import UnsupportedError
from tilec.ir.types import EPILOGUES
from tilec.transforms.plan import DType, KernelPlan, WorkSplit


def cname(plan: KernelPlan) -> str:
    """The file's C namespace and launcher prefix: from the configuration (the plan's name
    carries its reference launch's sizes, which the file must not)."""
    swap = "_swap" if plan.swap_ab else ""
    return re.sub(r"\W", "_", f"tilec_gemm_{plan.BM}x{plan.BN}x{plan.BK}{swap}")


class CudaPrinter:
    """Prints one plan: checks it (:func:`~.shape.check`), then each section of the file comes
    from the module of its role (:mod:`.schedule`, :mod:`.work`, :mod:`.mainloop`,
    :mod:`.epilogue`, and the header, constants and host launcher here)."""

    def __init__(self, plan: KernelPlan, mma_in_flight: int = 1, epilogue: str | None = None,
                 loads: bool = True) -> None:
        if mma_in_flight not in (0, 1):
            raise UnsupportedError(f"mma_in_flight must be 0 or 1 but got {mma_in_flight}")
        # lowering resolves the epilogue (legalize's cuda_epilogue): a CUDA plan carries it
        assert plan.epilogue is not None, (
            f"plan {plan.name!r} carries no epilogue: lower it with target='cuda'")
        epilogue = plan.epilogue.value if epilogue is None else epilogue
        if epilogue not in (*EPILOGUES, "none"):
            raise UnsupportedError(
                f"epilogue must be {', '.join(map(repr, EPILOGUES))} or 'none' but got "
                f"{epilogue!r}")
        shape = check(plan, epilogue)
        self.kernel = Kernel(plan, shape, epilogue, mma_in_flight,
                             loads,  # False: a measurement, the producer arrives without loading
                             cname(plan), partials(plan))

    @property
    def plan(self) -> KernelPlan:
        return self.kernel.plan

    @property
    def shape(self) -> KernelShape:
        return self.kernel.shape

    @property
    def epilogue(self) -> str:
        """The epilogue printed (the plan's, or the printer's option)."""
        return self.kernel.epilogue

    @property
    def cname(self) -> str:
        """The C namespace (and launcher prefix) of the file."""
        return self.kernel.cname

    @property
    def partials(self) -> bool:
        """Whether some work units cover part of a tile's K range (a fix-up is printed)."""
        return self.kernel.partials

    def workspace(self, split: WorkSplit | None = None) -> tuple[int, int]:
        """(fp32 workspace elements, int32 tickets) the launcher allocates for the fix-up of
        ``split`` (the split at a launch's sizes; None: the plan's reference launch)."""
        return workspace(self.kernel, self.plan.work if split is None else split)

    def emit_schedule(self) -> str:
        """The host-compilable schedule section (:func:`~.schedule.schedule_functions`)."""
        return schedule_functions(self.kernel)

    def emit(self) -> str:
        k = self.kernel
        sections = [
            header(k),
            INDEX_HELPERS + FASTDIV_HELPERS,
            constants(k),
            schedule_functions(k),
            "#if defined(__CUDACC__)",
            DEVICE_HELPERS,
            (wgmma_function(k.plan.BM, k.plan.dtype.value, a_mn_major=not k.plan.b.transposed,
                            n_name="BM") if k.plan.swap_ab else
             wgmma_function(k.plan.BN, k.plan.dtype.value, not k.plan.b.transposed)),
            spread_sum_function(k) if spread(k) else "",
            (partial_store_function(k) if reduced(k) else fixup_function(k)) if k.partials else "",
            kernel_function(k),
            *([reduce_kernel_function(k)] if reduced(k) else []),
            host(k),
            "#endif  // __CUDACC__",
        ]
        return "\n".join(s.strip("\n") + "\n" for s in sections)


def header(k: Kernel) -> str:
    """The file's comment header (plan, tiling, epilogue, multicast forms) and includes."""
    p, s = k.plan, k.shape
    lines = [
        "// Generated by tilec: C[M, N] = A[M, K] @ "
        f"{'B[N, K]^T' if p.b.transposed else 'B[K, N]'}, {p.dtype.value} in, fp32 accumulate, "
        f"{p.c_dtype.value} out; M, N, K and the row strides are launch arguments.",
        f"// Tiles {p.BM}x{p.BN}x{p.BK}, {s.stages} stages, {s.consumers} consumer warpgroup(s), "
        f"cluster {s.cluster}, {p.work.kind.value} over the schedule's {ORDER_CTAS(k)} CTAs.",
        *(["// SWAP_AB: each tile computed as C^T = B^T A^T: wgmma m64n{BM}k16 with a 64-column slab "
           "of B as its A, A as its B; each consumer owns WG_N columns (N_SUB slabs of 64)."]
          if p.swap_ab else []),
        "// Variants: gemm_kernel<true> (closed multicast forms, exact stage release where printed, "
        "no boundary predicates) where facts_hold(shape), else gemm_kernel<false>.",
        f"// Epilogue: {epilogue_name(k)}.",
        *(["// Fix-up: reduce kernel: each K part stores its partial to its own workspace slot; "
           "reduce_kernel, launched after gemm_kernel, sums them in K order and writes C."]
          if reduced(k) else []),
        *(["// Fix-up: deterministic: each K part stores its partial to its own slot; where every part is "
           "resident at once each sums its share of the tile in K order (spread), else the last part sums."]
          if spread(k) else []),
        "// L2 eviction hints of the TMA loads (lowering's rule, or set_kernel(evict=)): "
        + ", ".join(f"{op.name} {rule[2] if (rule := evict_where(op)) else op.evict}"
                    for op in (p.a, p.b))
        + "".join(f" ({op.name} {rule[1]} where {rule[0]})" for op in (p.a, p.b)
                  if (rule := evict_where(op)) is not None)
        + (f"; L2 prefetch {p.prefetch} k-iterations ahead of the loads (set_kernel(prefetch=))."
           if p.prefetch else "."),
        "// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 (-shared -Xcompiler -fPIC)",
    ]
    for op in (p.a, p.b):
        mc = op.multicast
        if mc is not None:
            form = "closed" if mc.closed_form else "general"
            if mc.closed_form and mc.guard != sympy.true:
                form = "closed under a run-time guard, else general"
            lines.append(f"// Operand {op.name}: multicast {mc.mode.value}, {form} form; "
                         f"facts: {', '.join(map(str, mc.facts)) or 'none'}.")
    lines += ["#include <cstdint>", "#include <cstring>"]
    lines += [
        "#if defined(__CUDACC__)",
        "#include <cuda.h>",
        "#include <cuda_runtime.h>",
        "#include <cuda_bf16.h>",
        "#include <cuda_fp16.h>",
        "#endif",
    ]
    return "\n".join(lines)


def ORDER_CTAS(k: Kernel) -> int:
    """The CTAs of the schedule's own walk (a configuration number: the schedule's SMS)."""
    return k.plan.order.ctas or k.plan.work.grid


def constants(k: Kernel) -> str:
    """The kernel's ``constexpr`` numbers: tiling, threads, shared memory, the work split's
    configuration, the release masks; nothing that depends on M, N, K (the ``Shape``)."""
    p, s = k.plan, k.shape
    consts = {
        "BM": p.BM, "BN": p.BN, "BK": p.BK,
        "STAGES": s.stages, "CONSUMERS": s.consumers,
        **({"WG_N": s.wg_m, "N_SUB": s.m_sub} if s.swap else {"WG_M": s.wg_m, "M_SUB": s.m_sub}),
        "CLUSTER": s.cluster,
        "THREADS": s.threads, "CHUNKS_A": s.chunks_a, "CHUNKS_B": s.chunks_b,
        "SMEM_BYTES": s.smem_bytes,
        "TMA_STORE": int(s.tma_store),
        "EPI_BYTES": (s.consumers * s.epi_boxes * (p.BM * 128 if s.swap else BOX_BYTES)
                      if s.tma_store else 0),
    }
    if p.prefetch:
        consts["PREFETCH"] = p.prefetch  # k-iterations of L2 look-ahead
    consts |= work_constants(k)
    body = [f"constexpr int {k} = {v};" for k, v in consts.items()]
    body += [
        f"constexpr uint32_t A_STAGE_BYTES = BM * BK * {p.dtype.nbytes};",
        f"constexpr uint32_t B_STAGE_BYTES = BN * BK * {p.dtype.nbytes};",
        "constexpr uint32_t STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;",
    ]
    if s.receivers is not None and s.cluster > 1:
        pack = lambda ms: sum(m << (8 * r) for r, m in enumerate(ms))  # noqa: E731
        body += [
            "// Stage release (docs/cuda_backend.md): byte r of RECV is R'(r), the CTAs rank r's "
            "loads land in (r too);",
            "// byte r of SEND is S'(r) = {x : r in R'(x)}, the CTAs whose empty barriers rank r's "
            "consumers arrive on.  The closed variant uses them (facts_hold checks them).",
            "constexpr bool HAS_EXACT = true;",
            f"constexpr uint64_t RECV = 0x{pack(s.receivers):x}ull;",
            f"constexpr uint64_t SEND = 0x{pack(s.senders):x}ull;",
        ]
    else:
        body += ["constexpr bool HAS_EXACT = false;  // the all-cluster stage release in both variants",
                 "[[maybe_unused]] constexpr uint64_t RECV = 0, SEND = 0;"]
    return f"namespace {k.cname} {{\n" + "\n".join(body) + "\n}"


# What the launcher refuses (docs/cuda_backend.md, "Launch"): 3001-3003 a base address of A, B,
# C not 16-byte aligned; 3011-3013 a row stride of A, B, C shorter than its row or not a
# multiple of 16 bytes (TMA); 3100 a negative size or one past the work split's bounds; 3200 a
# grid that is not whole clusters; 3300 the closed variant forced where its facts do not hold.
LAUNCH_ERRORS: dict[int, tuple[str | None, str]] = {
    3001: ("A", "its base address is not 16-byte aligned (TMA)"),
    3002: ("B", "its base address is not 16-byte aligned (TMA)"),
    3003: ("C", "its base address is not 16-byte aligned (TMA stores)"),
    3011: ("A", "its row stride is shorter than K or not a multiple of 16 bytes (TMA)"),
    3012: ("B", "its row stride is shorter than its row or not a multiple of 16 bytes (TMA)"),
    3013: ("C", "its row stride is shorter than N or (TMA stores) not a multiple of 16 bytes"),
    3100: (None, "a size is negative"),
    3200: (None, "the grid is not a positive number of whole clusters"),
    3300: (None, "the closed variant was forced but its facts do not hold at these sizes"),
}


def host(k: Kernel) -> str:
    """The host side: TMA map encoding (per call, cached per operand by pointer, shape and
    stride), the ``extern "C"`` launcher (argument checks, the variant by ``facts_hold``) and
    the occupancy query."""
    p = k.plan
    n = k.cname
    dts = {DType.BF16: "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", DType.FP16: "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
           DType.FP32: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"}
    dt, dtc = dts[p.dtype], dts[p.c_dtype]
    b_rows, b_cols = ("N", "K") if p.b.transposed else ("K", "N")
    bbox = "BN / CHUNKS_B, BK" if p.b.transposed else "BK, 64"
    cbox = "BM, 64" if p.swap_ab else "64, 64"  # the epilogue's staging box: rows, columns
    # the occupancy query's grid: the schedule's CTAs, or (one CTA per tile, a count that depends
    # on M and N) a full wave of clusters
    occ_grid = ("(ORDER_CTAS + CLUSTER - 1) / CLUSTER * CLUSTER" if order_ctas_fixed(k)
                else "132 * CLUSTER")
    reduce = "".join(ln + "\n" for ln in reduce_launch()) if reduced(k) else ""
    spr = spread(k)
    args = ("tmA.map, tmB.map, tmC.map, static_cast<TOut*>(C), static_cast<float*>(ws), "
            "static_cast<int*>(tickets), sh")
    spread_test = "".join(ln + "\n" for ln in spread_launch(args)) if spr else ""
    spread_arg = ", 0" if spr else ""
    head = ("  if (!launched) " if spr else "  ") + "kernel<<<grid, THREADS, SMEM_BYTES, (cudaStream_t)stream>>>("
    launch = (head + "tmA.map, tmB.map, tmC.map, static_cast<TOut*>(C),\n" + " " * len(head)
              + "static_cast<float*>(ws), static_cast<int*>(tickets), sh")
    spread_query = (f"""
// Whether the last launch spread the deterministic fix-up over its K parts (spread.py): 1 or 0.
extern "C" int {n}_last_spread() {{ return {n}::last_spread; }}

""" if spr else "")
    helpers = spread_helpers(n) if spr else ""
    return f"""
namespace {n} {{
typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A 2-D row-major [rows, cols] tensor with row stride ld (elements) as a TMA map: boxes of
// box_cols x box_rows, 128-byte swizzle; out-of-bounds elements read as zero and are not written
// (ragged M, N and K edges).  The last (pointer, shape, stride) is kept: a repeated call re-encodes
// nothing.
struct TensorMap {{
  CUtensorMap map;
  const void* ptr = nullptr;
  int rows = -1, cols = -1;
  long long ld = -1;
}};

static int encode_map(TensorMap& m, CUtensorMapDataType dt, size_t elem, const void* ptr, int rows,
                      int cols, long long ld, int box_rows, int box_cols) {{
  if (m.ptr == ptr && m.rows == rows && m.cols == cols && m.ld == ld) return 0;
  static EncodeTiled encode = nullptr;
  if (!encode) {{
    cudaDriverEntryPointQueryResult q;
    void* fn = nullptr;
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) return 1000;
    encode = reinterpret_cast<EncodeTiled>(fn);
  }}
  const cuuint64_t dims[2] = {{(cuuint64_t)cols, (cuuint64_t)rows}};
  const cuuint64_t strides[1] = {{(cuuint64_t)ld * elem}};
  const cuuint32_t box[2] = {{(cuuint32_t)box_cols, (cuuint32_t)box_rows}};
  const cuuint32_t estr[2] = {{1, 1}};
  m.ptr = nullptr;
  CUresult r = encode(&m.map, dt, 2, const_cast<void*>(ptr), dims, strides, box, estr,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return 2000 + (int)r;
  m.ptr = ptr; m.rows = rows; m.cols = cols; m.ld = ld;
  return 0;
}}

// A row stride TMA can take: at least the row, a multiple of 16 bytes.
static bool tma_stride(long long ld, int cols, size_t elem) {{ return ld >= cols && (ld * (long long)elem) % 16 == 0; }}

static int set_smem() {{
  static bool done = false;
  if (done) return 0;
  cudaError_t e = cudaFuncSetAttribute(gemm_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  if (e == cudaSuccess) e = cudaFuncSetAttribute(gemm_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  if (e != cudaSuccess) return (int)e;
  done = true;
  return 0;
}}
{helpers}}}  // namespace {n}

// C (M x N, row stride ldc) = A (M x K, row stride lda) @ {'B^T with B (N x K' if p.b.transposed else 'B with B (K x N'}, row stride ldb),
// all on `stream`.  grid, splits, sk_tiles, sk_ctas: the work split at these sizes (the
// launcher's plan.split.at; splits 1 without split-K, sk_* 0 without Stream-K).  variant: -1 picks by facts_hold (the closed variant
// where its facts hold), 0 the general, 1 the closed one (3300 where its facts do not hold).
// Returns 0, a cudaError_t, 1000 + / 2000 + a driver error from the tensor-map encoder, or a
// refusal 3001-3300 (docs/cuda_backend.md, "Launch").
// ws / tickets: the fix-up's fp32 workspace and zeroed int32 tickets (sizes: the launcher's
// workspace(); null when both are 0); the kernel leaves the tickets (and an atomic workspace) zeroed.
extern "C" int {n}_launch(const void* A, const void* B, void* C, void* ws, void* tickets, void* stream,
                          int M, int N, int K, long long lda, long long ldb, long long ldc,
                          int grid, int splits, int sk_tiles, int sk_ctas, int variant) {{
  using namespace {n};
  if (M < 0 || N < 0 || K < 0) return 3100;
  if (M == 0 || N == 0) return 0;  // C is empty
  if (reinterpret_cast<uintptr_t>(C) % 16 != 0 && TMA_STORE) return 3003;
  if (ldc < N || (TMA_STORE && (ldc * (long long)sizeof(TOut)) % 16 != 0)) return 3013;
  if (K == 0)  // C = 0
    return (int)cudaMemset2DAsync(C, ldc * sizeof(TOut), 0, N * sizeof(TOut), M, (cudaStream_t)stream);
  if (reinterpret_cast<uintptr_t>(A) % 16 != 0) return 3001;
  if (reinterpret_cast<uintptr_t>(B) % 16 != 0) return 3002;
  if (!tma_stride(lda, K, sizeof(TIn))) return 3011;
  if (!tma_stride(ldb, {b_cols}, sizeof(TIn))) return 3012;
  if (grid < CLUSTER || grid % CLUSTER != 0) return 3200;
  if (int e = set_smem()) return e;
  const Shape sh = make_shape(M, N, K, ldc, grid, splits, sk_tiles, sk_ctas);
  // facts_hold is linear in the tiles: the answers of the last 16 shapes are kept
  static Shape seen[16];
  static bool seen_facts[16], seen_used[16];
  static int next = 0;
  int at = -1;
  for (int i = 0; i < 16 && at < 0; ++i) if (seen_used[i] && memcmp(&seen[i], &sh, sizeof(Shape)) == 0) at = i;
  if (at < 0) {{ at = next; next = (next + 1) % 16; seen[at] = sh; seen_facts[at] = facts_hold(sh); seen_used[at] = true; }}
  if (variant == 1 && !seen_facts[at]) return 3300;
  const bool closed = variant < 0 ? seen_facts[at] : variant == 1;
  static TensorMap tmA, tmB, tmC;
  if (int r = encode_map(tmA, {dt}, sizeof(TIn), A, M, K, lda, BM / CHUNKS_A, BK)) return r;
  if (int r = encode_map(tmB, {dt}, sizeof(TIn), B, {b_rows}, {b_cols}, ldb, {bbox})) return r;
  if (TMA_STORE) {{
    if (int r = encode_map(tmC, {dtc}, sizeof(TOut), C, M, N, ldc, {cbox})) return r;
  }}
  auto kernel = closed ? gemm_kernel<true> : gemm_kernel<false>;
{spread_test}{launch}{spread_arg});
{reduce}  return (int)cudaGetLastError();
}}

{spread_query}// Which variant a launch at these sizes runs: 1 the closed one (facts_hold), 0 the general one.
extern "C" int {n}_variant(int M, int N, int K, long long ldc, int grid, int splits, int sk_tiles,
                           int sk_ctas) {{
  using namespace {n};
  return facts_hold(make_shape(M, N, K, ldc, grid, splits, sk_tiles, sk_ctas)) ? 1 : 0;
}}

// How many clusters of this kernel fit on the device at once (for choosing the grid); < 0 on error.
extern "C" int {n}_max_active_clusters() {{
  using namespace {n};
  if (set_smem() != 0) return -1;
  cudaLaunchConfig_t cfg = {{}};
  cfg.gridDim = dim3({occ_grid}, 1, 1);
  cfg.blockDim = dim3(THREADS, 1, 1);
  cfg.dynamicSmemBytes = SMEM_BYTES;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, gemm_kernel<false>, &cfg) != cudaSuccess) return -2;
  return n;
}}
"""


def emit(plan: KernelPlan, mma_in_flight: int = 1, epilogue: str | None = None,
         loads: bool = True) -> str:
    """The standalone ``.cu`` source for ``plan`` (sm_90a); see the module docstring.

    ``mma_in_flight``: wgmma groups a consumer leaves running while it waits for the next stage
    (1: overlap the tensor cores with the next stage's wait; 0: wait for each stage's MMAs).
    ``epilogue``: "tma" (registers -> shared memory -> TMA store; needs a 16-bit C and the room),
    "tma_tile" (the same with the warpgroup's whole tile staged, so its stores overlap the next
    tile's MMAs; needs M_SUB * BN / 64 boxes of 8 KiB per consumer: fewer stages),
    "none" (a measurement only: C is not written, to time the kernel without its epilogue),
    "direct" (registers -> global), "overlap" (the tile packed to 16 bits in registers and
    stored box by box, through the "tma" staging ring, during the next tile's first
    k-iterations; the same needs as "tma"); None: the plan's (lowering's choice: the schedule's
    ``set_kernel(epilogue=...)``, else overlapped TMA stores where they fit).
    ``loads=False`` is a measurement only: the producer releases every stage with nothing
    loaded, so the kernel times its MMAs, barriers and epilogue without memory traffic.
    Raises :class:`~tilec.errors.UnsupportedError` for plan features this backend does not print.
    """
    return CudaPrinter(plan, mma_in_flight, epilogue, loads).emit()


def emit_schedule(plan: KernelPlan) -> str:
    """Only the host-compilable schedule section (the same text ``emit`` puts in the file)."""
    return CudaPrinter(plan).emit_schedule()


def host_prefix(source: str) -> str:
    """The host-compilable head of a generated file: constants and schedule functions.

    A host harness includes this text verbatim to check the masks the kernel will use.
    """
    return source[: source.index(SCHEDULE_END) + len(SCHEDULE_END)] + "\n"
