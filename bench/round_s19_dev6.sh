#!/bin/bash
# Session 19, device call 6: racecheck to completion on the session-19 tiles call 5's racecheck did not
# reach (it timed out on 1062 x 4096 x 14336): one 176-row tile, the decode 16x128 tile whole and in
# two K parts, and the 136x128 wide tile at half the K (1062 x 4096 x 7168, the same configuration).
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv | tee $OUT/racecheck.log
SHAPES="9x7168x2048 9x4608x3584 171x14336x4096 1062x4096x7168"
python bench/sanitize_library_cuda.py devlib/cuda_s19a.py $SHAPES 2>&1 | tail -5 | tee -a $OUT/racecheck.log
timeout 170 compute-sanitizer --tool racecheck --print-limit 20 \
    python bench/sanitize_library_cuda.py devlib/cuda_s19a.py $SHAPES 2>&1 | tail -12 >> $OUT/racecheck.log
tail -8 $OUT/racecheck.log
