#!/bin/bash
# Session 17, device call 4: compute-sanitizer (memcheck, racecheck, synccheck) on the CUDA built
# library's own launch path (devlib/cuda_exact.py, as calls 2-3): bench/sanitize_library_cuda.py.
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
date -u
python bench/sanitize_library_cuda.py devlib/cuda_exact.py 2>&1 | tail -8   # builds the kernels once
for tool in memcheck racecheck synccheck; do
  echo "== $tool"
  timeout 170 compute-sanitizer --tool $tool --print-limit 20 \
      python bench/sanitize_library_cuda.py devlib/cuda_exact.py 2>&1 | tail -12
done
