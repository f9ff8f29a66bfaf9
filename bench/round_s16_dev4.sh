# session 16, device call 4: one 128x128 tile, K 65536 (0.895-0.897x with the spread sum): (a) the pick
# beside 44 and 52 parts; (b, c) the pick with the spread sum loading 32 and 48 slots at once
# (SPREAD_LOADS, edited in this call's copy of the tree only; the loads past the last slot load the
# last again, as in the committed reduce_float4)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
DET=DECOMP=splitk,FIXUP=deterministic
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,$DET,SPLITS=44 \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,$DET,SPLITS=52
sed -i 's/^SPREAD_LOADS = 16$/SPREAD_LOADS = 32/' tilec/codegen/cuda/printer/spread.py
grep -n "^SPREAD_LOADS" tilec/codegen/cuda/printer/spread.py
probe b --only '^deep_128_k64k$'
sed -i 's/^SPREAD_LOADS = 32$/SPREAD_LOADS = 48/' tilec/codegen/cuda/printer/spread.py
grep -n "^SPREAD_LOADS" tilec/codegen/cuda/printer/spread.py
probe c --only '^deep_128_k64k$'
sed -i 's/^SPREAD_LOADS = 48$/SPREAD_LOADS = 16/' tilec/codegen/cuda/printer/spread.py
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
