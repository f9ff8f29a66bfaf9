# session 16, device call 3: call 2 ran every reduce-kernel pick 1-8% slower than call 1 after two
# changes to reduce_float4 (loads past the last slot predicated off, 24 slots at once for the spread
# sum); both reverted. (a) one 128x128 tile, K 65536: the rule's deterministic 48 parts (spread)
# beside the reduce kernel; (b) the few-tile deep-K picks beside the spread sum; (c) the 50 CUDA
# rows; (d) compute-sanitizer on the spread sum (bench_cuda.py's session 16 cases, launchable now)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
DET=DECOMP=splitk,FIXUP=deterministic
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=48
probe b --only '^(skinny_512_k64k|deep_256x1024_k128k)$' \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,$DET,SPLITS=16,CM=2,CN=1
mkdir -p $OUT/all
( time timeout 330 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -56 $OUT/all.log | cut -c1-160
( time timeout 240 python bench/bench_cuda.py --out $OUT --sanitize-only '"SPLITS": 16, "FIXUP": "deterministic"' \
    --perf none --skip-correctness --tag _s16 ) > $OUT/san.log 2>&1
grep -E "^## |rc=|ERROR SUMMARY|TIMEOUT|rel_err" $OUT/san.log | cut -c1-200
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
