#!/bin/bash
# Session 18, device call 7: candidates for fresh shapes that lost in call 6 (prepared on the CPU
# machine with bench/dispatch_cuda.py prepare --dir devlib/p_<name> --shape ... --candidates ...;
# the candidates are in each result): swapped rows tiles under half a wave, alone or split-K 2
# (135 and 75 x 4096 x 7168; 128 x 4096 x 7168 as a check), past the rule's K (175 x 4096 x 14336),
# and the decode swap with 18 tiles of 256 columns (9 x 4608 x 3584). (A first try without --only/--shape
# at run time timed nothing.)
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
for sh in m135=135x4096x7168 m75=75x4096x7168 m128=128x4096x7168 m175=175x4096x14336 m9=9x4608x3584; do
  s=${sh%%=*}
  mkdir -p $OUT/$s
  timeout 100 python bench/dispatch_cuda.py run --dir devlib/p_$s --only "^$s\$" --shape $sh --rounds 5 \
    --jobs 16 --out $OUT/$s 2>&1 \
    | grep -v "^shape " | grep -v "^compiled" | grep -v "^wrote"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
