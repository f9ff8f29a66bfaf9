#!/bin/bash
# Session 19, device call 2: session 19's rules (cuda_swap: the half-wave tile whole below
# K = 7168 and up to 176 rows; one 176-row tile; 136-176-row tiles of 128 columns where M is just
# past a multiple of 128; decode 16x128 whole at K <= 2048, in two K parts under 24 tiles of 256
# columns) in the CUDA library (devlib/cuda_s19a.py: tilec build examples/gemm_decomposition.py
# --target cuda --no-tuned, 729 configurations, 113 kernels). First the two decode probes of call
# 1 again (their JSON did not come back), then the library under compute-sanitizer, then fresh
# shapes of seeds 19 (timed in session 18), 20 and 21 (never timed).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
for sh in m9=9x4608x3584 m9b=9x7168x2048; do
  s=${sh%%=*}; mkdir -p $OUT/$s
  timeout 60 python bench/dispatch_cuda.py run --dir devlib/p_$s --only "^$s\$" --shape $sh --rounds 5 \
    --jobs 16 --out $OUT/$s 2>&1 | grep -v "^shape " | grep -v "^compiled" | grep -v "^wrote"
done
python bench/sanitize_library_cuda.py devlib/cuda_s19a.py 2>&1 | tail -13   # builds the kernels once
for tool in memcheck racecheck synccheck; do
  echo "== $tool"
  timeout 150 compute-sanitizer --tool $tool --print-limit 20 \
      python bench/sanitize_library_cuda.py devlib/cuda_s19a.py 2>&1 | tail -4
done
for seed in 19 20 21; do
  mkdir -p $OUT/s$seed
  timeout 100 python bench/dispatch.py --module devlib/cuda_s19a.py --fresh 32 --seed $seed --parts shapes \
      --jobs 16 --out $OUT/s$seed 2>&1 | tail -36
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
