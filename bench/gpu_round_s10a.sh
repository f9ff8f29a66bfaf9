#!/usr/bin/env bash
# One device call (session 10, issue 26): what the shape-generic work still lacked a GPU figure for.
#   1. every example's generic CUDA kernel (one-CTA-per-tile gemm_basic and grouped_raster
#      included) at eight shapes, both variants forced (bench/gpu_cuda_examples.py); the .so files
#      are prebuilt on the CPU (TILEC_CUDA_CACHE=cudacache, carried)
#   2. the CUDA generic kernel vs the per-shape kernels of 9d1b699 on the full suite, 5 rounds
#      (bench/gpu_generic.py)
#   3. the built library (prebuilt on the CPU: libbench/benchgemm.py, carried): host time per call,
#      the 200-shape compile stream, CUDA graphs and torch.compile (bench/dispatch.py --parts
#      host,stream,graphs)
# Clocks are read, never set. Usage on the device: bash bench/gpu_round_s10a.sh
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TILEC_CUDA_CACHE=$PWD/cudacache
q="--query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu"
nvidia-smi $q --format=csv > $OUT/clocks.txt 2>&1; cat $OUT/clocks.txt
echo "== 1 cuda examples"; timeout ${T1:-120} python bench/gpu_cuda_examples.py --out $OUT > $OUT/examples.log 2>&1; echo "rc=$?"; grep -v "ok=True" $OUT/examples.log | tail -25; grep -c "ok=True" $OUT/examples.log
echo "== 2 cuda generic vs per-shape"; timeout ${T2:-230} python bench/gpu_generic.py --out $OUT > $OUT/cuda.log 2>&1; echo "rc=$?"; tail -22 $OUT/cuda.log
echo "== 3 library stream"; timeout ${T3:-200} python bench/dispatch.py --parts host,stream,graphs --module libbench/benchgemm.py --max-size 8192 --out $OUT > $OUT/library.log 2>&1; echo "rc=$?"; tail -30 $OUT/library.log
nvidia-smi $q --format=csv,noheader >> $OUT/clocks.txt 2>&1; tail -1 $OUT/clocks.txt
