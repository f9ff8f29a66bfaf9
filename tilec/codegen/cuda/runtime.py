"""PTX helper functions emitted into every generated ``.cu`` file (sm_90a).

These are the fixed runtime of the CUDA backend, in the spirit of nvFuser's runtime helper files:
small ``__device__`` wrappers around one PTX instruction each (mbarrier, TMA, cluster, wgmma
fences, setmaxnreg).  Nothing schedule-dependent lives here; the printer in ``cuda.py`` composes
them.  ``wgmma_function`` is the one generated helper: the ``wgmma.mma_async`` instruction for a
given N has N/2 accumulator operands, so its asm text is produced from N.
"""

from __future__ import annotations

from tilec.errors import UnsupportedError

# Floor-semantics integer helpers for the expression printer (used only where the signs of the
# operands are not proven; see expr.py), in int and, for `wide` expressions, in 64 bits.
# __host__ __device__ so the host harness can use them.
INDEX_HELPERS = r"""
#if defined(__CUDACC__)
#define TILEC_HD __host__ __device__ __forceinline__
#else
#define TILEC_HD inline
#endif
TILEC_HD int tilec_floordiv(int a, int b) { int q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
TILEC_HD int tilec_mod(int a, int b) { int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
TILEC_HD int tilec_min(int a, int b) { return a < b ? a : b; }
TILEC_HD int tilec_max(int a, int b) { return a > b ? a : b; }
TILEC_HD long long tilec_floordiv64(long long a, long long b) { long long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
TILEC_HD long long tilec_mod64(long long a, long long b) { long long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
TILEC_HD long long tilec_min64(long long a, long long b) { return a < b ? a : b; }
TILEC_HD long long tilec_max64(long long a, long long b) { return a > b ? a : b; }
"""

# Division by a run-time count in per-tile code (the wgmma printer's Shape: printer/invariants.py),
# after INDEX_HELPERS (TILEC_HD); host-compilable.
FASTDIV_HELPERS = r"""
TILEC_HD unsigned tilec_umulhi(unsigned a, unsigned b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return (unsigned)(((unsigned long long)a * b) >> 32);
#endif
}
TILEC_HD unsigned long long tilec_umul64hi(unsigned long long a, unsigned long long b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  const unsigned long long a0 = a & 0xFFFFFFFFull, a1 = a >> 32, b0 = b & 0xFFFFFFFFull, b1 = b >> 32;
  const unsigned long long p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const unsigned long long mid = (p00 >> 32) + (p01 & 0xFFFFFFFFull) + (p10 & 0xFFFFFFFFull);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}
// Division by a run-time divisor 0 < d < 2^31 as a multiply-high, an add and a shift (Granlund &
// Montgomery 1994, as CUTLASS's FastDivmod), of a dividend 0 <= n < 2^31 (div) or 0 <= n < 2^63
// (div64): with l = ceil(log2 d) and m = floor(2^(W+l) / d) + 1 = 2^W + mul (W = 32, 64),
// floor(n / d) = floor(m * n / 2^(W+l)) = (umulhi(n, mul) + n) >> l; the sum stays below 2^W
// (umulhi(n, mul) < n < 2^(W-1)).  Made once per launch (make_shape, on the host), used per
// tile or work unit instead of a ~20-instruction (64-bit: ~70) division.  No padding: launchers
// compare Shapes bytewise.
struct tilec_fastdiv {
  unsigned long long mul64;
  int d;
  unsigned mul, shift, unused;
  TILEC_HD int div(int n) const { return (int)((tilec_umulhi((unsigned)n, mul) + (unsigned)n) >> shift); }
  TILEC_HD int mod(int n) const { return n - div(n) * d; }
  TILEC_HD long long div64(long long n) const {
    return (long long)((tilec_umul64hi((unsigned long long)n, mul64) + (unsigned long long)n) >> shift);
  }
  TILEC_HD long long mod64(long long n) const { return n - div64(n) * d; }
};
TILEC_HD tilec_fastdiv tilec_fastdiv_of(int d) {
  tilec_fastdiv f;
  f.mul64 = 0; f.d = d; f.mul = 0; f.shift = 0; f.unused = 0;
  if (d <= 0) return f;  // (never divided by: the printer divides by it where d > 0 is proven)
  while ((1ull << f.shift) < (unsigned long long)d) ++f.shift;
  // floor(2^(32+l) / d) = q1, and floor(2^(64+l) / d) = q1 * 2^32 + floor(r1 * 2^32 / d)
  const unsigned long long top = 1ull << (32 + f.shift), q1 = top / (unsigned long long)d;
  const unsigned long long r1 = top - q1 * (unsigned long long)d;
  f.mul = (unsigned)(q1 + 1 - (1ull << 32));
  f.mul64 = (q1 << 32) + (r1 << 32) / (unsigned long long)d + 1;  // mod 2^64
  return f;
}
"""

DEVICE_HELPERS = r"""
namespace tilec {

// the fix-up's ticket: one thread's acquire-release add at GPU scope, after a barrier
__device__ __forceinline__ int ticket_acq_rel(int* p) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}

// the spread fix-up's wait: one thread's acquire load at GPU scope
__device__ __forceinline__ int ld_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- cluster ------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r; asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r)); return r;
}
// Every thread of every CTA of the cluster arrives, then waits (not .aligned: roles diverge).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// ---- mbarrier -----------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
               :: "r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t addr = smem_u32(bar);
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "TILEC_WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra TILEC_WAIT_%=;\n\t}"
      :: "r"(addr), "r"(parity) : "memory");
}
// Arrive on the barrier at the same smem offset in CTA `cta` of the cluster (mapa + remote arrive).
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n\t}"
      :: "r"(smem_u32(bar)), "r"(cta) : "memory");
}

// Release a stage to CTA `cta` of the cluster: plain (release.cta) arrive on its barrier, as
// CUTLASS's ClusterBarrier::arrive does.  The reads being released were done by wgmma and already
// waited for; a .release.cluster arrive would add MEMBAR.ALL.GPU to every k-step (seen in SASS).
__device__ __forceinline__ void mbar_arrive_remote(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}"
      :: "r"(smem_u32(bar)), "r"(cta) : "memory");
}
__device__ __forceinline__ void mbar_arrive_local(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_u32(bar)) : "memory");
}

// ---- epilogue: shared memory -> global by TMA store ---------------------------------------
__device__ __forceinline__ void named_bar_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void st_shared_b32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(map), "r"(smem_u32(src)), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" :: "n"(N) : "memory");
}

// ---- L2 policy ----------------------------------------------------------------------------
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t p; asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); return p;
}
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p; asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p;
}
// no hint: a policy of 0 makes the *_hint loads below issue the plain instruction (a policy
// made by createpolicy ... evict_normal ran 4096^3 at 0.86x of the plain loads on the H200)
__device__ __forceinline__ uint64_t policy_evict_normal() { return 0; }

// ---- TMA (2-D tiles; coordinates innermost first) -----------------------------------------
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar,
                                         int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];"
      :: "r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_load_hint(void* dst, const CUtensorMap* map, uint64_t* bar,
                                              int c0, int c1, uint64_t policy) {
  if (policy == 0) { tma_load(dst, map, bar, c0, c1); return; }
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      :: "r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}
// The box lands at the same smem offset (and signals the barrier at the same offset) in every
// CTA whose bit is set in `mask`.
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, uint64_t* bar,
                                                   int c0, int c1, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      :: "r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
__device__ __forceinline__ void tma_load_multicast_hint(void* dst, const CUtensorMap* map,
                                                        uint64_t* bar, int c0, int c1,
                                                        uint16_t mask, uint64_t policy) {
  if (policy == 0) { tma_load_multicast(dst, map, bar, c0, c1, mask); return; }
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5, %6;"
      :: "r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask),
         "l"(policy) : "memory");
}
// Bring a box into L2 (no shared memory, no barrier): the producer's look-ahead.
__device__ __forceinline__ void tma_prefetch_l2(const CUtensorMap* map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
               :: "l"(map), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_prefetch_l2_hint(const CUtensorMap* map, int c0, int c1,
                                                     uint64_t policy) {
  if (policy == 0) { tma_prefetch_l2(map, c0, c1); return; }
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint [%0, {%1, %2}], %3;"
               :: "l"(map), "r"(c0), "r"(c1), "l"(policy) : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" :: "l"(map) : "memory");
}

// ---- warpgroup ----------------------------------------------------------------------------
template <uint32_t R> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(R));
}
template <uint32_t R> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(R));
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}

// Shared-memory matrix descriptor, K-major operand with the 128-byte swizzle: rows of 128 bytes,
// 8-row core groups 1024 bytes apart (stride byte offset), leading byte offset unused (1).
__device__ __forceinline__ uint64_t smem_desc_sw128(const void* p) {
  uint64_t addr = smem_u32(p);
  uint64_t desc = (addr & 0x3FFFF) >> 4;
  desc |= uint64_t(1) << 16;
  desc |= uint64_t(1024 >> 4) << 32;
  desc |= uint64_t(1) << 62;
  return desc;
}
// MN-major operand (B given K x N), 128-byte swizzle: 64-element MN chunks of `chunk_bytes`
// (leading byte offset), 8-row K groups 1024 bytes apart (stride byte offset).
__device__ __forceinline__ uint64_t smem_desc_sw128_mn(const void* p, uint32_t chunk_bytes) {
  uint64_t addr = smem_u32(p);
  uint64_t desc = (addr & 0x3FFFF) >> 4;
  desc |= uint64_t((chunk_bytes >> 4) & 0x3FFF) << 16;
  desc |= uint64_t(1024 >> 4) << 32;
  desc |= uint64_t(1) << 62;
  return desc;
}

}  // namespace tilec
"""

_WGMMA_TYPES = {"bf16": "bf16", "fp16": "f16"}


def wgmma_function(n: int, dtype: str, b_mn_major: bool = False, a_mn_major: bool = False,
                   n_name: str = "BN") -> str:
    """``tilec::wgmma_m64n{n}k16``: D(64 x n, fp32) (+)= A(smem) * B(smem), each operand K-major
    or, with ``a_mn_major`` / ``b_mn_major``, MN-major (the instruction's transpose-A / -B
    immediates, its last two).  The plain kernel's A is ours (K-major) and its B ours (MN-major
    when given K x N); the swapped kernel's (SWAP_AB=1) A is a 64-column slab of our B and its B
    our A, with ``n`` = BM (``n_name``, for the message).

    ``scale_d`` 0 overwrites D (first k step of a tile), 1 accumulates.

    >>> "p, 1, 1, 1, 0;" in wgmma_function(104, "bf16", a_mn_major=True, n_name="BM")
    True
    >>> wgmma_function(100, "bf16", n_name="BM")
    Traceback (most recent call last):
    ...
    tilec.errors.UnsupportedError: wgmma needs N a multiple of 8 in [8, 256] but got BM = 100
    """
    if n % 8 != 0 or not 8 <= n <= 256:
        raise UnsupportedError(f"wgmma needs N a multiple of 8 in [8, 256] but got {n_name} = {n}")
    if dtype not in _WGMMA_TYPES:
        raise UnsupportedError(f"wgmma input dtype must be bf16 or fp16 but got {dtype}")
    ty = _WGMMA_TYPES[dtype]
    nreg = n // 2
    regs = ", ".join(f"%{i}" for i in range(nreg))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(nreg))
    return (
        f"namespace tilec {{\n"
        f"__device__ __forceinline__ void wgmma_m64n{n}k16(float (&d)[{nreg}], uint64_t desc_a,\n"
        f"                                                  uint64_t desc_b, int scale_d) {{\n"
        f"  asm volatile(\n"
        f'      "{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %{nreg + 2}, 0;\\n\\t"\n'
        f'      "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ty}.{ty} "\n'
        f'      "{{{regs}}}, "\n'
        f'      "%{nreg}, %{nreg + 1}, p, 1, 1, {int(a_mn_major)}, {int(b_mn_major)};\\n\\t}}"\n'
        f"      : {outs}\n"
        f'      : "l"(desc_a), "l"(desc_b), "r"(scale_d));\n'
        f"}}\n}}  // namespace tilec\n"
    )
