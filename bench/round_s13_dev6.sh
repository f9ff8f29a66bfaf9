# session 13, device call 6: the CUDA path's 50 shapes with the session's heuristic (64x256 for M <= 96 with
# enough tiles, decode 8 stages, the reduce-kernel fix-up, the 2x1 cluster where B's rows are off 128 bytes, no
# L2 hint off one tile row); compute-sanitizer on the 2x1 split-K case
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all $OUT/san
( time timeout 330 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -58 $OUT/all.log
( time timeout 150 python bench/bench_cuda.py --out $OUT/san --perf none --skip-correctness \
    --sanitize-only '"K": 3000' --tag _s13_cluster ) > $OUT/san.log 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|rel_err|##" $OUT/san.log | head -12
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
