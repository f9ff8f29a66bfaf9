# session 13, device call 8: Nsight Compute on the CUDA path's deep-K main loop against cuBLAS at 512^2 x 65536 and
# 256 x 1024 x 131072 (where neither the fix-up, the L2 hints nor a cluster closed the gap)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy"
for shape in "512 512 65536" "256 1024 131072"; do
  set -- $shape
  timeout 120 ncu --launch-skip 2 --launch-count 1 -k regex:gemm_kernel $S python bench/ncu_deepk.py tilec $1 $2 $3 \
    > $OUT/ncu_tilec_$1x$2x$3.txt 2>&1
  timeout 90 ncu --launch-skip 2 --launch-count 1 -k regex:'gemm|sm90|cutlass|Kernel' $S python bench/ncu_deepk.py cublas $1 $2 $3 \
    > $OUT/ncu_cublas_$1x$2x$3.txt 2>&1
done
for f in $OUT/ncu_*.txt; do echo "== $f"; grep -E "tilec:|  [a-z_]*gemm|Kernel2|sm90|Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Registers Per|Block Size|Grid Size|Stall|Achieved Occupancy|L1/TEX Hit|L2 Hit" $f | head -30; done
