#!/bin/bash
# The GPU run of docs/sweep.md: the seed's kind of shapes (250: M 16..8192, N and K
# 1024..16384, powers of two), split-K baseline and cuBLAS. With two GPUs (nvidia-h200-x2): all
# shapes on two GPUs, then every other shape on one; with one: all shapes on it. Each run with a
# cold Triton cache. Results into $OUT (bench/results/sweep_* in the repository).
set -x
export PYTHONPATH=$PWD TILEC_CACHE=/tmp/tc
nvidia-smi -L; nproc
GRID="M=16..8192x2 N=1024..16384x2 K=1024..16384x2"
NGPU=$(nvidia-smi -L | grep -c '^GPU')
if [ "$NGPU" -ge 2 ]; then
  TRITON_CACHE_DIR=/tmp/triton_2gpu python bench/bench_sweep.py --shapes "$GRID" --gpus 2 \
      --limit 4 --time-limit ${T2:-130} --timeout 60 --db $OUT/sweep_h200x2_2gpu.sqlite \
      --out $OUT/sweep_h200x2_2gpu.json --plot $OUT/sweep_h200x2_map.png 2>&1 | tail -${TAIL:-25}
  TRITON_CACHE_DIR=/tmp/triton_1gpu python bench/bench_sweep.py --shapes "$GRID" --take 1::2 \
      --gpus 1 --limit 4 --time-limit ${T1:-90} --timeout 60 --db $OUT/sweep_h200x2_1gpu.sqlite \
      --out $OUT/sweep_h200x2_1gpu.json 2>&1 | tail -${TAIL:-25}
else
  TRITON_CACHE_DIR=/tmp/triton_1gpu python bench/bench_sweep.py --shapes "$GRID" --gpus 1 \
      --limit 4 --time-limit ${T1:-220} --timeout 60 --db $OUT/sweep_h200_1gpu.sqlite \
      --out $OUT/sweep_h200_1gpu.json --plot $OUT/sweep_h200_map.png 2>&1 | tail -${TAIL:-25}
fi
ls -la $OUT
