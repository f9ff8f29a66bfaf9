#!/bin/bash
# Session 18, device call 1: the CUDA library with the copy of gen's CUDA heuristic
# (devlib/cuda_heur.py: tilec build examples/gemm_decomposition.py --target cuda --no-tuned,
# default --max-size, no --shape: every shape of bench/dispatch.py is one the module was not told
# about), two runs of the 50 shapes (alternated rounds, L2 flushed, NaN-poisoned out).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
mkdir -p $OUT/heur $OUT/heur2
timeout 270 python bench/dispatch.py --module devlib/cuda_heur.py --parts shapes --jobs 16 \
    --out $OUT/heur 2>&1 | tail -58
timeout 200 python bench/dispatch.py --module devlib/cuda_heur.py --parts shapes --jobs 16 \
    --out $OUT/heur2 2>&1 | tail -6
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
