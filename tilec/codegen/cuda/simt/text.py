"""Fixed CUDA text the SIMT printer pastes (the ``cp.async`` helpers, the fix-up's ticket) and
the vector types' spellings."""

VT = {1: "float", 2: "float2", 4: "float4"}
LANE = ("x", "y", "z", "w")
ZERO = {1: "0.f", 2: "make_float2(0.f, 0.f)", 4: "make_float4(0.f, 0.f, 0.f, 0.f)"}

# cp.async (sm_80+) in PTX: no CUDA C++ operator copies global memory straight to shared memory.
# A copy whose guard is false reads nothing (source size 0) and fills the destination with zeros.
ASYNC_HELPERS = r"""
template <int BYTES>
__device__ __forceinline__ void tilec_cp_async(void* smem, const void* gmem, bool full) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_bytes = full ? BYTES : 0;
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(gmem), "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" :: "r"(dst), "l"(gmem), "n"(BYTES), "r"(src_bytes));
  }
}
__device__ __forceinline__ void tilec_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void tilec_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }
"""


# The fix-up's ticket (CUTLASS's split-K semaphore pattern): after a CTA barrier one thread
# takes it with an acquire-release atomic at GPU scope, instead of a fence in every thread.
TICKET_HELPER = r"""
__device__ __forceinline__ int tilec_ticket(int* p) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}
"""


# A 16-byte cp.async of the first ``src_bytes`` (0..16) bytes, the rest zero-filled: the vector at
# the end of a row of B whose length is not a multiple of 4 (``TileCopy.edge``).
PART_HELPER = r"""
__device__ __forceinline__ void tilec_cp_async_part(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(gmem), "r"(src_bytes));
}
"""
