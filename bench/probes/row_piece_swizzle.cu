// Session 20: which TMA form lands a 128-byte row piece of a 16-bit K x N operand (rows off 16
// bytes) where a 128B-swizzled 2-D box puts that row.  One CTA loads a 64 x 64 box of B (rows of
// N = 1001 elements, from row 5, column 37) into 1024-aligned shared memory, piece by piece, and
// writes the shared bytes out; the host compares them with the 128B swizzle of the same rows
// (16-byte chunk j of row r at chunk j ^ (r % 8)).  argv[1]: the variant
//   1: a rank-1 map over B, SWIZZLE_128B, cp.async.bulk.tensor.1d
//   2: a rank-2 map {extent, 1}, box {64, 1}, SWIZZLE_128B, .2d at (x, 0)
//   4: the plain 2-D box of rows on 16 bytes (N % 8 == 0), one load: the harness's check
//   3: a rank-2 map, rows overlapping every 16 bytes ({8 + 64, extent / 8}, stride 16), box
//      {64, 1}, SWIZZLE_128B, .2d at (x % 8, x / 8)
// argv[2], argv[3]: N and the first column (default 1001, 37); argv[4] 0: no swizzle.
// Prints "variant V: ok" or the first mismatch, or the CUDA error.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
constexpr int K = 80, R0 = 5;
__constant__ int dN, dC0;
static int N = 1001, C0 = 37;

__global__ void probe(const __grid_constant__ CUtensorMap map, int variant, uint16_t* out) {
  extern __shared__ uint8_t raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(64 * 128));
    for (int r = 0; r < 64; ++r) {
      const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem + r * 128));
      const int x = (R0 + r) * dN + dC0;
      if (variant == 1)
        asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];"
                     :: "r"(dst), "l"(&map), "r"(b), "r"(x) : "memory");
      else if (variant == 2)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                     :: "r"(dst), "l"(&map), "r"(b), "r"(x), "r"(0) : "memory");
      else if (variant == 3)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                     :: "r"(dst), "l"(&map), "r"(b), "r"(x % 8), "r"(x / 8) : "memory");
      else if (r == 0)  // 4: the plain 2-D box (rows on 16 bytes), the harness's check
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                     :: "r"(dst), "l"(&map), "r"(b), "r"(dC0), "r"(R0) : "memory");
    }
    asm volatile(
        "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra W;\n}"
        :: "r"(b) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[i] = reinterpret_cast<uint16_t*>(smem)[i];
}

int main(int argc, char** argv) {
  const int variant = argc > 1 ? atoi(argv[1]) : 1;
  if (argc > 2) N = atoi(argv[2]);
  if (argc > 3) C0 = atoi(argv[3]);
  const CUtensorMapSwizzle sw = argc > 4 && atoi(argv[4]) == 0 ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B;
  cudaMemcpyToSymbol(dN, &N, 4); cudaMemcpyToSymbol(dC0, &C0, 4);
  std::vector<uint16_t> h(N * K);
  for (int i = 0; i < N * K; ++i) h[i] = static_cast<uint16_t>(i * 2654435761u >> 16);
  uint16_t *d, *o;
  cudaMalloc(&d, h.size() * 2); cudaMalloc(&o, 64 * 64 * 2);
  cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  void* fn = nullptr; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  EncodeTiled enc = reinterpret_cast<EncodeTiled>(fn);
  CUtensorMap map;
  const unsigned long long extent = (unsigned long long)N * K;
  CUresult r;
  if (variant == 1) {
    cuuint64_t dims[1] = {extent}, str[1] = {0}; cuuint32_t box[1] = {64}, es[1] = {1};
    r = enc(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 1, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
            sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  } else if (variant == 2) {
    cuuint64_t dims[2] = {extent, 1}, str[1] = {(extent * 2 + 15) / 16 * 16}; cuuint32_t box[2] = {64, 1}, es[2] = {1, 1};
    r = enc(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
            sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  } else if (variant == 4) {
    cuuint64_t dims[2] = {(cuuint64_t)N, K}, str[1] = {(cuuint64_t)N * 2}; cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
    r = enc(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
            sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  } else {
    cuuint64_t dims[2] = {72, extent / 8}, str[1] = {16}; cuuint32_t box[2] = {64, 1}, es[2] = {1, 1};
    r = enc(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
            sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  if (r != CUDA_SUCCESS) { printf("variant %d: encode refused (CUresult %d)\n", variant, (int)r); return 0; }
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 128 + 1024);
  probe<<<1, 128, 64 * 128 + 1024>>>(map, variant, o);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("variant %d N %d C0 %d swizzle %d: %s\n", variant, N, C0, (int)sw, cudaGetErrorString(e)); return 0; }
  std::vector<uint16_t> got(64 * 64);
  cudaMemcpy(got.data(), o, got.size() * 2, cudaMemcpyDeviceToHost);
  int plain = 0, swz = 0;
  for (int rr = 0; rr < 64; ++rr)
    for (int c = 0; c < 64; ++c) {
      const uint16_t want = h[(R0 + rr) * N + C0 + c];
      const int chunk = c / 8, at_sw = rr * 64 + ((chunk ^ (rr % 8)) * 8) + c % 8;
      swz += got[at_sw] == want; plain += got[rr * 64 + c] == want;
    }
  printf("variant %d N %d C0 %d swizzle %d: %d of 4096 elements where the 128B swizzle puts them, %d where no swizzle would: %s\n",
         variant, N, C0, (int)sw, swz, plain, swz == 4096 ? "ok" : "WRONG");
  return 0;
}
