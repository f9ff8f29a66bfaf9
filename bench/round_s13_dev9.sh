# session 13, device call 9: cuBLAS's deep-K kernel (nvjet 128x128, 6 stages, 2x1 cluster, split-K, per Nsight
# Compute) expressed through gemm_decomposition's knobs, beside the heuristic's 128x256 split-K 16
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/dk
( time timeout 150 python bench/dispatch_cuda.py all --out $OUT/dk --only 'skinny_512|deep_256x1024|skinny_1024|deep_4096x512' \
    --candidates BN=128,STAGES=6,DECOMP=splitk,SPLITS=8 --candidates CM=2,CN=1,BN=128,STAGES=6,DECOMP=splitk,SPLITS=8 \
    --candidates CM=2,CN=1,BN=128,STAGES=6,DECOMP=splitk,SPLITS=8,FIXUP=reduce_kernel \
    --candidates CM=2,CN=1,BN=128,STAGES=4,DECOMP=splitk,SPLITS=8 ) > $OUT/dk.log 2>&1
tail -26 $OUT/dk.log
