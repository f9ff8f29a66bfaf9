# session 15, device call 5: 1000^3 with the TMA-store epilogue (the heuristic's tile, 64x128 with and without the
# 2x1 cluster, swapped 128x64 / 128x128): is the ragged direct-store epilogue what costs the 128x128 kernel there?
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/a
( time timeout 170 python bench/dispatch_cuda.py all --out $OUT/a --only '^ragged_1000$' --candidates EPILOGUE=tma \
  --candidates BM=64,BN=128,WARPS=8,STAGES=8,EPILOGUE=tma --candidates BM=64,BN=128,WARPS=8,STAGES=8,CM=2,CN=1,EPILOGUE=tma \
  --candidates SWAP_AB=1,BM=128,BN=64,WARPS=8,STAGES=8,DECOMP=dp,EPILOGUE=tma \
  --candidates SWAP_AB=1,BM=128,BN=128,WARPS=12,STAGES=4,DECOMP=dp ) > $OUT/a.log 2>&1
grep -A8 "^shape " $OUT/a.log | cut -c1-190
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
