#!/bin/bash
# Session 20, device calls 4 and 5: B given K x N with rows off 16 bytes loaded in the kernel, one
# 128-byte 1-D box a row from the 16-byte boundary below the row's first element, the window's
# next 16 bytes as a tail, the row shifted into place in shared memory by a thread of the producer
# warpgroup (ROWS_B's second form; not kept). Call 4: the tails by 16-byte TMA boxes, which fault
# (misaligned address: TMA writes only to 128-byte boundaries); call 5: the tails by cp.async,
# correct and 3-12x slower than the copies (TMA's issue rate, call 6).
# First gen's launcher on the cases of bench/probe_row_pieces.py (a 2x1 cluster multicasting B,
# swapped tiles, split-K, Stream-K, a strided view, B's column 0 NaN), then the library
# (devlib/cuda_s20a.py: tilec build examples/gemm_decomposition.py --target cuda --no-tuned) on
# bench/sanitize_library_cuda.py's cases and under memcheck on those with B's rows off 16 bytes,
# then fresh shapes of seeds 19, 20, 21 (session 19 timed them with the copies).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
L=$OUT/round.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv | tee $L
date -u | tee -a $L
timeout 120 python bench/probe_row_pieces.py run devlib/rowp 2>&1 | tail -18 | tee -a $L
timeout 150 python bench/sanitize_library_cuda.py devlib/cuda_s20a.py 2>&1 | tail -21 | tee -a $L
UNALIGNED="37x100x36 66x1676x4254 5x3778x7331 1x572x524 287x547x874 1388x1434x386"
echo "== memcheck" | tee -a $L
timeout 100 compute-sanitizer --tool memcheck --print-limit 20 \
    python bench/sanitize_library_cuda.py devlib/cuda_s20a.py $UNALIGNED 2>&1 | tail -5 | tee -a $L
for tool in synccheck racecheck; do
  echo "== $tool" | tee -a $L
  timeout 90 compute-sanitizer --tool $tool --print-limit 20 \
      python bench/sanitize_library_cuda.py devlib/cuda_s20a.py 37x100x36 1x572x524 287x547x874 2>&1 | tail -5 | tee -a $L
done
for seed in 19 20 21; do
  mkdir -p $OUT/s$seed
  timeout 100 python bench/dispatch.py --module devlib/cuda_s20a.py --fresh 32 --seed $seed --parts shapes \
      --jobs 16 --out $OUT/s$seed 2>&1 | tail -36 > $OUT/s$seed/log.txt
  tail -3 $OUT/s$seed/log.txt | tee -a $L
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $L
