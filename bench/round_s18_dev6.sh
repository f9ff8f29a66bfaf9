#!/bin/bash
# Session 18, device call 6: shapes nobody named. The CUDA library of call 1 (devlib/cuda_heur.py,
# the copy of gen's CUDA heuristic, no exact entries) on 32 shapes drawn today with a fixed seed
# (bench/dispatch.py --fresh 32 --seed 18: layers of public models with M log-uniform in 1..8192,
# and one in four M, N, K all log-uniform), none of which any rule was tuned on.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
timeout 450 python bench/dispatch.py --module devlib/cuda_heur.py --fresh 32 --seed 18 --parts shapes \
    --jobs 16 --out $OUT 2>&1 | tail -40
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
