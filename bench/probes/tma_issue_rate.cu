// Session 20: what one producer thread's TMA issue costs per stage when a 64 x 128 tile of a 16-bit
// operand (16 KiB) is loaded (a) as 2 boxes of 64 x 64 (the 2-D map of rows on 16 bytes),
// (b) as 128 boxes of one 128-byte row (a 1-D map: ROWS_B's windows), (c) as 16 boxes of
// 64 x 8 (8 maps of every 8th row), plus (d) (b) with 64 cp.async of 16 bytes (the tails).
// 132 CTAs stream a 256 MiB operand through a 4-stage ring: one thread issues, one warp waits and
// releases (no math).  Prints GB/s per variant.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
constexpr int ROWS = 64 * 1024, COLS = 2048;  // 256 MiB of bf16
constexpr int ST = 4, TILE = 64 * 128 * 2;
__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait(uint64_t* b, uint32_t ph) {
  asm volatile("{\n .reg .pred p;\n W%=: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W%=;\n}" :: "r"(sa(b)), "r"(ph) : "memory");
}
__global__ void __launch_bounds__(64, 1) stream(const __grid_constant__ CUtensorMap m2, const __grid_constant__ CUtensorMap m1,
                                               const __grid_constant__ CUtensorMap m8, int variant, const uint16_t* src) {
  extern __shared__ uint8_t raw[];
  uint8_t* smem = (uint8_t*)(((uintptr_t)raw + 1023) & ~(uintptr_t)1023);
  uint8_t* tails = smem + ST * TILE;
  __shared__ __align__(8) uint64_t full[ST], empty[ST];
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int tiles = (ROWS / 64) * (COLS / 128);
  if (threadIdx.x == 0) {
    int s = 0; uint32_t ph = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const int r0 = (t / (COLS / 128)) * 64, c0 = (t % (COLS / 128)) * 128;
      wait(&empty[s], ph ^ 1);
      uint8_t* dst = smem + s * TILE;
      const uint32_t b = sa(&full[s]);
      if (variant == 3) {
        for (int r = 0; r < 64; ++r)
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 16;" :: "r"(sa(tails + s * 1024 + r * 16)),
                       "l"(src + (long long)(r0 + r) * COLS + c0 + 128) : "memory");
        asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" :: "r"(b) : "memory");
      }
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(TILE) : "memory");
      if (variant == 0) {
        for (int c = 0; c < 2; ++c)
          asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                       :: "r"(sa(dst + c * 8192)), "l"(&m2), "r"(b), "r"(c0 + c * 64), "r"(r0) : "memory");
      } else if (variant == 1 || variant == 3) {
        for (int r = 0; r < 64; ++r)
          for (int c = 0; c < 2; ++c)
            asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];"
                         :: "r"(sa(dst + c * 8192 + r * 128)), "l"(&m1), "r"(b), "r"((r0 + r) * COLS + c0 + c * 64) : "memory");
      } else {
        for (int j = 0; j < 8; ++j)
          for (int c = 0; c < 2; ++c)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
                         :: "r"(sa(dst + c * 8192 + j * 1024)), "l"(&m8), "r"(b), "r"(c0 + c * 64), "r"(j), "r"(r0 / 8) : "memory");
      }
      if (++s == ST) { s = 0; ph ^= 1; }
    }
  } else if (threadIdx.x == 32) {
    int s = 0; uint32_t ph = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      wait(&full[s], ph);
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(sa(&empty[s])) : "memory");
      if (++s == ST) { s = 0; ph ^= 1; }
    }
  }
}
int main() {
  uint16_t* d; cudaMalloc(&d, (size_t)ROWS * COLS * 2); cudaMemset(d, 1, (size_t)ROWS * COLS * 2);
  void* fn = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  EncodeTiled enc = (EncodeTiled)fn;
  CUtensorMap m2, m1, m8;
  { cuuint64_t dims[2] = {COLS, ROWS}, str[1] = {COLS * 2}; cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
    enc(&m2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); }
  { cuuint64_t dims[1] = {(cuuint64_t)ROWS * COLS}, str[1] = {0}; cuuint32_t box[1] = {64}, es[1] = {1};
    enc(&m1, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 1, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); }
  { // every 8th row: dims {cols, 8 residues, rows / 8}, strides {row, 8 rows}; box {64, 1, 8}
    cuuint64_t dims[3] = {COLS, 8, ROWS / 8}, str[2] = {COLS * 2, COLS * 2 * 8}; cuuint32_t box[3] = {64, 1, 8}, es[3] = {1, 1, 1};
    CUresult r = enc(&m8, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r) printf("3-d map refused %d\n", (int)r); }
  const int smem = ST * TILE + ST * 1024 + 1024;
  cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const char* names[4] = {"2 boxes 64x64 (2-D)", "128 boxes of one row (1-D)", "16 boxes 64x8 (3-D, every 8th row)", "128 1-D + 64 cp.async tails"};
  for (int v = 0; v < 4; ++v) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    stream<<<132, 64, smem>>>(m2, m1, m8, v, d);
    cudaEventRecord(a);
    for (int i = 0; i < 5; ++i) stream<<<132, 64, smem>>>(m2, m1, m8, v, d);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    cudaError_t e = cudaGetLastError();
    printf("%-40s %8.1f GB/s  %s\n", names[v], 5.0 * ROWS * COLS * 2 / (ms * 1e6), e ? cudaGetErrorString(e) : "");
  }
  return 0;
}
