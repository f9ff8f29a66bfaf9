#!/bin/bash
# Session 20, device calls 2 and 3: which TMA form loads a 128-byte row piece of a K x N operand
# whose rows are off 16 bytes (bench/probes/row_piece_swizzle.cu, built on the CPU with
#   nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 bench/probes/row_piece_swizzle.cu
#   -o devlib/row_piece_swizzle), after call 1's kernels faulted (illegal instruction).
# Arguments: variant, N, first column, swizzle (1: 128B, 0: none).
for a in "4 1000 40 1" "1 1000 40 1" "1 1000 40 0" "1 1001 37 0" "1 1001 37 1" "2 1000 40 1" \
         "3 1000 40 1" "3 1001 37 1"; do
  ./devlib/row_piece_swizzle $a
done 2>&1 | tee $OUT/swz.log
# Call 6 (after call 5 measured ROWS_B's first form at ~9 us a stage): one producer thread's TMA
# issue rate per form of the loads (bench/probes/tma_issue_rate.cu, built as above into
# devlib/tma_issue_rate).
./devlib/tma_issue_rate 2>&1 | tee $OUT/tma_rate.log
