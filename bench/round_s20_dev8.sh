#!/bin/bash
# Session 20, device call 8: candidates for the fresh shapes (seeds 19-21) that still lost with rows on
# 16 bytes (prepared on the CPU machine with bench/dispatch_cuda.py prepare --dir devlib/p_<name>
# --only '^<name>$' --shape <name>=MxNxK --candidates ..., the heuristic's pick included; each
# result names its candidates): the swapped rows tile past K = 8192 (261 x 4096 x 14336), deep-K
# one-row and decode tiles (78 and 6 x 8192 x 28672), wide swapped tiles past K = 18944
# (1198 x 8192 x 28672), rows tiles at K = 4096 (153, 1369, 1037 x 4096 x 4096), 32 decode rows
# (32 x 7168 x 2048).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
L=$OUT/round.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv | tee $L
date -u | tee -a $L
for sh in m261=261x4096x14336 m78=78x8192x28672 m6=6x8192x28672 m1198=1198x8192x28672 \
          m153=153x4096x4096 m1369=1369x4096x4096 m32=32x7168x2048 m1037=1037x4096x4096; do
  s=${sh%%=*}
  mkdir -p $OUT/$s
  timeout 60 python bench/dispatch_cuda.py run --dir devlib/p_$s --only "^$s\$" --shape $sh --rounds 5 \
    --jobs 16 --out $OUT/$s 2>&1 \
    | grep -v "^shape " | grep -v "^compiled" | grep -v "^wrote" | tee -a $L
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $L
