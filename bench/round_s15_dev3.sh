# session 15, device call 3: (1) issue 30's CUDA rows, the 50 shapes, with the rules drawn from calls 1-2
# (swapped ring 7-8 stages, 168x128 swapped past 1024 rows, 128x256 split-K 16 2x1 for very few deep tiles, one
# deep tile split 48 ways at 6 stages); (2) compute-sanitizer (memcheck, racecheck, synccheck) on the four new picks'
# kinds (bench_cuda.py's session 15 cases)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all
( time timeout 330 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -56 $OUT/all.log | cut -c1-160
( time timeout 200 python bench/bench_cuda.py --out $OUT --sanitize-only '"M": 340|"STAGES": 7|"K": 4096|"K": 6400' \
    --perf none --skip-correctness --tag _s15 ) > $OUT/san.log 2>&1
tail -30 $OUT/san.log | cut -c1-200
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
