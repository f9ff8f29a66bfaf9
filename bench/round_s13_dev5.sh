# session 13, device call 5: are the CUDA path's deep-K losses the L2 hints (A evict_first while several tile
# columns re-read A's rows)? seed004 without a cluster (the same kernel as gemm_decomposition's) with other hints
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/ev
S="seed:CM=1,CN=1,CLUSTER=1"
( time timeout 300 python bench/dispatch_cuda.py all --out $OUT/ev \
    --only 'skinny_512|deep_256x1024|deep_1000|deep_128|^c1536|skinny_1024|sq4096|l3_70b_qkv_m2048|deep_4096x512' \
    --shape c1536x64k=1536x1536x65536 \
    --candidates $S,EVICT=normal/normal --candidates $S,EVICT=last/last --candidates $S,EVICT=last/first ) > $OUT/ev.log 2>&1
tail -45 $OUT/ev.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
