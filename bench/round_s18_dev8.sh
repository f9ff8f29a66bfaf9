#!/bin/bash
# Session 18, device call 8: the half-wave rule (cuda_swap.half_wave: one swapped row tile under
# half a wave of 64-column tiles, split-K 2, K 7168-14336) in the library. devlib/cuda_heur4.py is
# devlib/cuda_heur.py rebuilt with it (on the CPU: the 50 shapes all as gen; against call 1's module
# it moves seed001_awq, and among the fresh shapes 127, 75 and 135 x 4096 x K (seed 18) and
# 52 x 4096 x 14336 (seed 19)). The 32 fresh shapes of seed 18 again, 32 of seed 19 never timed
# before, then the 50.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
mkdir -p $OUT/s18 $OUT/s19 $OUT/fifty
for seed in 18 19; do
  timeout 120 python bench/dispatch.py --module devlib/cuda_heur4.py --fresh 32 --seed $seed --parts shapes \
      --jobs 16 --out $OUT/s$seed 2>&1 | tail -36
done
timeout 150 python bench/dispatch.py --module devlib/cuda_heur4.py --parts shapes --jobs 16 --out $OUT/fifty \
    2>&1 | tail -54
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
