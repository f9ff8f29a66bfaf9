#!/bin/bash
# Session 17, device call 1: the CUDA built library with the 50 shapes as exact entries
# (tilec build --target cuda --shape ...), then its host time per call, CUDA graphs and
# torch.compile.
# (Ran with devlib/cuda_exact.py built at --max-size 32768 before the whole-split fix: its
# 16x256 split-K 3 config had been lowered at K = 1 and ran as a data-parallel kernel.)
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
mkdir -p $OUT/exact
timeout 570 python bench/dispatch.py --module devlib/cuda_exact.py --parts shapes,host,graphs \
    --jobs 16 --out $OUT/exact 2>&1 | tail -80
