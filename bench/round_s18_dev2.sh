#!/bin/bash
# Session 18, device call 2 (run twice: first with the 1000^3 pick alone, then as below): where 1000^3
# loses on the CUDA path (bench/probe_unaligned_s18.py on the
# module of call 1, devlib/cuda_heur.py): the 128x128 kernel picked at 1000^3 and the swapped 128x64
# picked at 1024^3, each at 1024^3 closed and general, at
# 1000^3 with rows of 1000 and of 1024 elements, and with one of M, N, K at 1000 at a time.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
timeout 300 python bench/probe_unaligned_s18.py devlib/cuda_heur.py --out $OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
