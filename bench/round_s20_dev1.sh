#!/bin/bash
# Session 20, device call 1: B given K x N with rows off 16 bytes loaded in the kernel, a 128-byte
# row piece at a time through a 1-D tensor map from each row's own first element (ROWS_B's first
# form; its code: not kept, see bench/results/cuda_rows_b_h200_2026-11-29_s20.txt), instead of the
# per-call padded copy. Every such launch faulted (illegal instruction): TMA reads only from
# 16-byte boundaries (calls 2-3, bench/round_s20_dev2.sh).
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
for seed in 19 20 21; do
  mkdir -p $OUT/s$seed
  timeout 100 python bench/dispatch.py --module devlib/cuda_s20a.py --fresh 32 --seed $seed --parts shapes \
      --jobs 16 --out $OUT/s$seed 2>&1 | tail -36 > $OUT/s$seed/log.txt
  tail -3 $OUT/s$seed/log.txt | tee -a $L
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $L
