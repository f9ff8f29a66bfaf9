#!/usr/bin/env bash
# One device call (session 9, issue 26): the shape-generic kernels on the GPU, each part under its
# own time limit so that one slow part cannot take the others' results with it.
#   1. CUDA wgmma generic kernel: correctness (NaN-poisoned C, both variants) and timing against
#      the per-shape files of 9d1b699 and cuBLAS (bench/gpu_generic.py --quick)
#   2. Triton generic vs per-shape (9d1b699) vs cuBLAS on the 14 suite shapes, 5 rounds
#      (bench/generic_vs_static.py)
#   3. the built library (tilec build) vs torch.matmul, host overhead, compile count over a shape
#      stream, CUDA graphs and torch.compile (bench/dispatch.py --quick)
#   4. the SIMT generic library: correctness at 21 shapes (ragged included) and timing against
#      cuBLAS SGEMM, TF32 off (bench/bench_simt.py run on simt_gen, generated on the CPU)
# Clocks are read, never set. Usage on the device: bash bench/gpu_round_s9.sh
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu --format=csv > $OUT/clocks.txt 2>&1
cat $OUT/clocks.txt
echo "== 1 cuda generic"; timeout ${T1:-150} python bench/gpu_generic.py --quick --out $OUT > $OUT/cuda.log 2>&1; echo "rc=$?"; tail -30 $OUT/cuda.log
echo "== 2 triton generic vs static"; timeout ${T2:-150} python bench/generic_vs_static.py --rounds 5 --out $OUT > $OUT/triton.log 2>&1; echo "rc=$?"; tail -20 $OUT/triton.log
echo "== 3 library"; timeout ${T3:-170} python bench/dispatch.py --quick --out $OUT > $OUT/library.log 2>&1; echo "rc=$?"; tail -30 $OUT/library.log
echo "== 4 simt"; timeout ${T4:-90} python bench/bench_simt.py run --dir simt_gen --out $OUT/simt.json --rounds 5 > $OUT/simt.log 2>&1; echo "rc=$?"; tail -30 $OUT/simt.log
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> $OUT/clocks.txt 2>&1
