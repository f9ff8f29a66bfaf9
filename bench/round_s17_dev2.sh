#!/bin/bash
# Session 17, device call 2: the CUDA built library (tilec build --target cuda, made on the CPU
# machine into devlib/ with --max-size 32768, not committed) over bench/dispatch.py's 50 shapes:
# buckets only (the shapes unnamed), then the 50 shapes as exact entries with the host time per
# call, CUDA graphs and torch.compile.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
mkdir -p $OUT/buckets $OUT/exact
timeout 250 python bench/dispatch.py --module devlib/cuda_buckets.py --parts shapes --jobs 16 \
    --out $OUT/buckets 2>&1 | tail -56
timeout 300 python bench/dispatch.py --module devlib/cuda_exact.py --parts shapes,host,graphs \
    --jobs 16 --out $OUT/exact 2>&1 | tail -75
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
