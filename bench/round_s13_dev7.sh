# session 13, device call 7: the CUDA path's 50 shapes after the L2-policy fix (no hint = the plain load), with the
# seed's plain-load kernel beside the generic one at four large shapes
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all $OUT/chk
( time timeout 300 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -56 $OUT/all.log
( time timeout 100 python bench/dispatch_cuda.py all --out $OUT/chk --only '^sq4096|wave_1664|qwen2_7b_qkv_m3000|deep_1000' \
    --candidates seed:CM=1,CN=1,CLUSTER=1,EVICT=normal/normal ) > $OUT/chk.log 2>&1
tail -12 $OUT/chk.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
