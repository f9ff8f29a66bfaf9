#!/bin/bash
# Session 18, device call 4: the direct epilogues store a tile wholly inside C unmasked, one put
# with a uniform flag (whole) in place of call 3's loop printed twice (put_whole, put), which ran the
# 168x128 tiles 2% slower (the general variant had masked every store: the swapped 128x64
# kernel ran 1024^3 at 10.50 us general against 9.70 us closed in call 2). devlib/cuda_heur3.py is
# devlib/cuda_heur.py rebuilt with that printer: bench/probe_unaligned_s18.py on it, then the 50
# shapes of bench/dispatch.py.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
date -u
mkdir -p $OUT/probe $OUT/heur2
timeout 200 python bench/probe_unaligned_s18.py devlib/cuda_heur3.py --out $OUT/probe
timeout 270 python bench/dispatch.py --module devlib/cuda_heur3.py --parts shapes --jobs 16 \
    --out $OUT/heur2 2>&1 | tail -56
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
