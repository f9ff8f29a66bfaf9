# session 13, device call 4: the CUDA reduce-kernel fix-up - correctness (NaN-poisoned, bitwise equal to the
# deterministic twin), compute-sanitizer, and its speed on the deep-K shapes beside the deterministic fix-up
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/rk_check $OUT/rk_speed
( time timeout 300 python bench/bench_cuda.py --out $OUT/rk_check --only reduce_kernel \
    --sanitize-only reduce_kernel --perf none --tag _s13_reduce ) > $OUT/rk_check.log 2>&1
tail -30 $OUT/rk_check.log
( time timeout 220 python bench/dispatch_cuda.py all --out $OUT/rk_speed \
    --only 'deep_128|deep_256x1024|skinny_512|skinny_1024|deep_1000|deep_4096x512|ragged_333|l3_70b_down_m32' \
    --candidates DECOMP=splitk,FIXUP=reduce_kernel --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=32 \
    --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=64 --candidates BN=256,DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=16 ) > $OUT/rk_speed.log 2>&1
tail -45 $OUT/rk_speed.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
