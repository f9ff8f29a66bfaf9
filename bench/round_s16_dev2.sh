# session 16, device call 2: (a) one 128x128 tile, K 65536, with the new rule (deterministic fix-up
# spread over 48 parts, 24 slots loaded at once) beside the reduce kernel it replaced, 40 / 56 parts
# and 4 / 5 stages; (b) the few-tile deep-K picks (reduce kernel, 16 parts) beside the spread sum;
# (c) issue 30's 50 CUDA rows; (d) compute-sanitizer (memcheck, racecheck, synccheck) on the spread
# sum (bench_cuda.py's session 16 cases)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
DET=DECOMP=splitk,FIXUP=deterministic
T=BM=128,BN=128,WARPS=12
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates $T,STAGES=6,DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=48 \
  --candidates $T,STAGES=6,$DET,SPLITS=40 \
  --candidates $T,STAGES=6,$DET,SPLITS=56 \
  --candidates $T,STAGES=5,$DET,SPLITS=48 \
  --candidates $T,STAGES=4,$DET,SPLITS=48
probe b --only '^(skinny_512_k64k|deep_256x1024_k128k)$' \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,$DET,SPLITS=16,CM=2,CN=1
mkdir -p $OUT/all
( time timeout 330 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -56 $OUT/all.log | cut -c1-160
( time timeout 240 python bench/bench_cuda.py --out $OUT --sanitize-only '"SPLITS": 16, "FIXUP": "deterministic"' \
    --perf none --skip-correctness --tag _s16 ) > $OUT/san.log 2>&1
grep -E "^## |rc=|ERROR SUMMARY|TIMEOUT|rel_err" $OUT/san.log | cut -c1-200
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
