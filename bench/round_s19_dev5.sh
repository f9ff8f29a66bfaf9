#!/bin/bash
# Session 19, device call 5: compute-sanitizer on the library with session 19's rules and the
# committed kernels (devlib/cuda_s19a.py, call 2's module: call 2's sanitizer lines fell out of the
# returned output, and call 3 sanitized the pointer-load patch that was not kept): session 19's
# tiles (the whole half-wave tile, 136-row wide tiles, one 176-row tile, the decode 16x128 tile
# whole and in two K parts), the half-wave split, and rows off 16 bytes (copied into padded rows).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv | tee $OUT/sanitizer.log
date -u | tee -a $OUT/sanitizer.log
SHAPES="135x4096x7168 132x4096x4096 1062x4096x14336 171x14336x4096 9x7168x2048 9x4608x3584 37x100x36 66x1676x4254 1x572x524"
python bench/sanitize_library_cuda.py devlib/cuda_s19a.py $SHAPES 2>&1 | tail -10 | tee -a $OUT/sanitizer.log
for tool in memcheck racecheck synccheck; do
  echo "== $tool" | tee -a $OUT/sanitizer.log
  timeout 110 compute-sanitizer --tool $tool --print-limit 20 \
      python bench/sanitize_library_cuda.py devlib/cuda_s19a.py $SHAPES 2>&1 | tail -12 >> $OUT/sanitizer.log
  tail -2 $OUT/sanitizer.log
done
