#!/bin/bash
# Session 19, device call 4: devlib/cuda_s19b.py (call 3's module: pointer loads for rows TMA
# cannot take, session 19's rules) timed: fresh seeds 19 and 20, then the 50. Every log to $OUT.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv | tee $OUT/clocks.txt
date -u | tee -a $OUT/clocks.txt
for seed in 19 20; do
  mkdir -p $OUT/s$seed
  timeout 100 python bench/dispatch.py --module devlib/cuda_s19b.py --fresh 32 --seed $seed --parts shapes \
      --jobs 16 --out $OUT/s$seed > $OUT/s$seed.log 2>&1; tail -2 $OUT/s$seed.log
done
mkdir -p $OUT/fifty
timeout 170 python bench/dispatch.py --module devlib/cuda_s19b.py --parts shapes --jobs 16 --out $OUT/fifty \
    > $OUT/fifty.log 2>&1; tail -2 $OUT/fifty.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $OUT/clocks.txt
