#!/bin/bash
# Session 18, device call 5: 128 x 128 x 65536 (one 128x128 tile, split-K 48 with the spread fix-up:
# 0.886-0.897x) against cuBLAS's own shape of answer (nvjet 64x32 tiles, 1x2 cluster, 16 stages,
# split-K with its reduce kernel): swapped small tiles (32x64, 64x64, 32x128, 128x64) split over
# 16-64 parts, 128 CTAs in all, with the reduce kernel or the deterministic fix-up. Prepared on the
# CPU machine (bench/dispatch_cuda.py prepare --dir devlib/deep128 --only '^deep_128_k64k$' with the
# candidates listed in the result), run here.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
timeout 400 python bench/dispatch_cuda.py run --dir devlib/deep128 --rounds 7 --jobs 16 --out $OUT 2>&1 | tail -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
