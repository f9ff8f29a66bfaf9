#!/bin/bash
# Session 19, device call 1: candidates for the fresh shapes (seeds 18, 19) that lost with rows on
# 16 bytes (prepared on the CPU machine with bench/dispatch_cuda.py prepare --dir devlib/p_<name>
# --only '^<name>$' --shape <name>=MxNxK --candidates ...; each result names its candidates):
# the half-wave split below K = 7168 (132 x 4096 x 4096, 100 x 4096 x 2048), 176-row swapped tiles
# (171 x 14336 x 4096; 175 x 4096 x 14336 at 6 and 7 stages), decode 16x128 tiles (9 x 4608 x 3584,
# 9 x 7168 x 2048), and M cut in swapped row tiles that fill the last wave (1062, 2451, 1369, 1700
# rows).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
for sh in m132=132x4096x4096 m100k2=100x4096x2048 m171=171x14336x4096 m175=175x4096x14336 \
          m9=9x4608x3584 m9b=9x7168x2048 m1062=1062x4096x14336 m2451=2451x4096x7168 \
          m1369=1369x4096x4096 m1700=1700x4096x14336; do
  s=${sh%%=*}
  mkdir -p $OUT/$s
  timeout 80 python bench/dispatch_cuda.py run --dir devlib/p_$s --only "^$s\$" --shape $sh --rounds 5 \
    --jobs 16 --out $OUT/$s 2>&1 \
    | grep -v "^shape " | grep -v "^compiled" | grep -v "^wrote"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
