# Session 14 (issue 30): the swapped CUDA kernel (SWAP_AB=1: our M on wgmma's N, BM any multiple
# of 8) at cuBLAS's own small / ragged-M tiles (nvjet, bench/results/cublas_kernels_h200_2026-11-28.json:
# our-M x our-N tiles 104x64, 168x64, 80x128, 160x128, 48x64, 128x64), direct and TMA-store
# epilogues, beside the heuristic's kernel and cuBLAS.  Each dispatch_cuda.py run checks every
# candidate on NaN-poisoned C (the device correctness test of the swapped kernel) before timing.
# On the GPU machine, from the repository root:  OUT=... bash bench/round_s14_swap.sh  (4 runs, each
# at most 65 s: under 4.5 min)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
OUT=${OUT:-bench/results}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
mkdir -p $OUT/swap_a $OUT/swap_b $OUT/swap_c $OUT/swap_d
S=SWAP_AB=1,DECOMP=dp
# M = 200 (2 x 104 rows) and 333 (2 x 168)
( time timeout 65 python bench/dispatch_cuda.py all --rounds 5 --out $OUT/swap_a \
    --only '^(dsv3_gateup_m200|ragged_333)$' \
    --candidates $S,BM=104,BN=64,WARPS=8,STAGES=8 \
    --candidates $S,BM=104,BN=64,WARPS=8,STAGES=8,EPILOGUE=tma \
    --candidates $S,BM=168,BN=64,WARPS=8,STAGES=6 \
    --candidates $S,BM=168,BN=64,WARPS=8,STAGES=5,EPILOGUE=tma \
    --candidates $S,BM=104,BN=128,WARPS=12,STAGES=6 ) > $OUT/swap_a.log 2>&1
tail -25 $OUT/swap_a.log
# M = 77 (1 x 80) and 320 (2 x 160)
( time timeout 65 python bench/dispatch_cuda.py all --rounds 5 --out $OUT/swap_b \
    --only '^(ragged_77x14336|dsv3_down_m320)$' \
    --candidates $S,BM=80,BN=128,WARPS=12,STAGES=6 \
    --candidates $S,BM=80,BN=128,WARPS=12,STAGES=6,EPILOGUE=tma \
    --candidates $S,BM=80,BN=128,WARPS=8,STAGES=6 \
    --candidates $S,BM=160,BN=128,WARPS=12,STAGES=5 \
    --candidates $S,BM=160,BN=128,WARPS=12,STAGES=4,EPILOGUE=tma ) > $OUT/swap_b.log 2>&1
tail -25 $OUT/swap_b.log
# M = 48 (1 x 48), 1000 (8 x 128) and 1024 (8 x 128)
( time timeout 65 python bench/dispatch_cuda.py all --rounds 5 --out $OUT/swap_c \
    --only '^(qwen2_7b_qkv_m48|ragged_1000|sq1024)$' \
    --candidates $S,BM=48,BN=64,WARPS=8,STAGES=8 \
    --candidates SWAP_AB=1,BM=48,BN=64,WARPS=8,STAGES=8,DECOMP=splitk,SPLITS=2,FIXUP=deterministic \
    --candidates $S,BM=128,BN=64,WARPS=8,STAGES=6 \
    --candidates $S,BM=128,BN=64,WARPS=8,STAGES=6,EPILOGUE=tma \
    --candidates $S,BM=128,BN=128,WARPS=12,STAGES=5 ) > $OUT/swap_c.log 2>&1
tail -30 $OUT/swap_c.log
# decode rows and few deep tiles: cuBLAS's swapped small-M tiles with split-K + reduce (our N x our M
# 64x8, 64x16, 256x16, 256x32)
R=SWAP_AB=1,DECOMP=splitk,FIXUP=reduce_kernel
( time timeout 65 python bench/dispatch_cuda.py all --rounds 5 --out $OUT/swap_d \
    --only '^(deep_128_k64k|l3_70b_qkv_m16|l3_8b_qkv_m1|l3_70b_down_m32)$' \
    --candidates $R,BM=32,BN=64,WARPS=8,STAGES=8,SPLITS=16 \
    --candidates $R,BM=8,BN=64,WARPS=8,STAGES=8,SPLITS=2 \
    --candidates $R,BM=16,BN=256,WARPS=8,STAGES=6,SPLITS=3 \
    --candidates $R,BM=16,BN=256,WARPS=12,STAGES=6,SPLITS=4 \
    --candidates $R,BM=32,BN=256,WARPS=12,STAGES=6,SPLITS=4 \
    --candidates SWAP_AB=1,DECOMP=splitk,FIXUP=deterministic,BM=16,BN=256,WARPS=8,STAGES=6,SPLITS=3 ) > $OUT/swap_d.log 2>&1
tail -40 $OUT/swap_d.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
