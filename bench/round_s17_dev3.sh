#!/bin/bash
# Session 17, device call 3: a second run of the CUDA library with the 50 shapes as exact entries
# (devlib/cuda_exact.py, as call 2), and a module with B as an N x K weight (B_LAYOUT=nk,
# devlib/cuda_nk_quick.py: --max-size 4096, dispatch.py's 12 quick shapes as exact entries) on
# those quick shapes: correctness into NaN-poisoned out, timing, CUDA graphs and torch.compile.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
mkdir -p $OUT/exact2 $OUT/nk
timeout 300 python bench/dispatch.py --module devlib/cuda_exact.py --parts shapes --jobs 16 \
    --out $OUT/exact2 2>&1 | tail -56
timeout 200 python bench/dispatch.py --module devlib/cuda_nk_quick.py --quick --parts shapes,graphs \
    --jobs 16 --out $OUT/nk 2>&1 | tail -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
