#!/bin/bash
# Session 19, device call 3: the CUDA kernel loads an A or B whose rows TMA cannot take by pointer
# (tilec::ptr_box in the producer warpgroup) instead of the library copying it into padded rows on
# every call. devlib/cuda_s19b.py: tilec build examples/gemm_decomposition.py --target cuda
# --no-tuned with it and session 19's rules (ragged cut from K = 7168). First correctness: the gen
# launcher on misaligned bases and odd strides (bench/probe_pointer_loads.py, prepared on the CPU
# into devlib/ptr), the library under compute-sanitizer (bench/sanitize_library_cuda.py: the
# unaligned cases and session 19's tiles). Every log to $OUT. (Timing: call 4.)
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv | tee $OUT/clocks.txt
date -u | tee -a $OUT/clocks.txt
timeout 120 python bench/probe_pointer_loads.py run devlib/ptr 2>&1 | tail -12 | tee $OUT/pointer.log
python bench/sanitize_library_cuda.py devlib/cuda_s19b.py 2>&1 | tail -20 | tee $OUT/sanitizer.log
for tool in memcheck racecheck synccheck; do
  echo "== $tool" | tee -a $OUT/sanitizer.log
  timeout 130 compute-sanitizer --tool $tool --print-limit 20 \
      python bench/sanitize_library_cuda.py devlib/cuda_s19b.py 2>&1 | tail -4 | tee -a $OUT/sanitizer.log
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv | tee -a $OUT/clocks.txt
