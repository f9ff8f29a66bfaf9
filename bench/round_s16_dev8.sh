# session 16, device call 8: the spread sum launched cooperatively (so that a grid never waits on its
# own parts that cannot start while another kernel holds the SMs): (a) bench/spread_streams.py, two
# spread GEMMs on two streams at once, again and again; (b) 128 x 128 x 65536 and the few-tile picks
# timed with the cooperative launch; (c) compute-sanitizer on the spread cases
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
( time timeout 150 python bench/spread_streams.py --rounds 200 --timeout 120 --out $OUT/spread_streams.json ) > $OUT/streams.log 2>&1
cat $OUT/streams.log | grep -v "^+" | tail -12
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^(deep_128_k64k|skinny_512_k64k)$' \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,DECOMP=splitk,FIXUP=deterministic,SPLITS=16,CM=2,CN=1
( time timeout 200 python bench/bench_cuda.py --out $OUT --sanitize-only '"SPLITS": 16, "FIXUP": "deterministic"' \
    --perf none --skip-correctness --tag _s16_coop ) > $OUT/san.log 2>&1
grep -E "^## |rc=|ERROR SUMMARY|TIMEOUT|rel_err" $OUT/san.log | cut -c1-200
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
