# session 14, device call 3: the swapped CUDA kernel (SWAP_AB=1, helper hswap's bench/round_s14_swap.sh: cuBLAS's
# small / ragged-M tiles as candidates, each checked on NaN-poisoned C, then timed beside the heuristic's kernel and
# cuBLAS), then compute-sanitizer (memcheck, racecheck, synccheck) on the five swapped sanitizer cases of bench_cuda.py
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
bash bench/round_s14_swap.sh
mkdir -p $OUT/san
( time timeout 200 python bench/bench_cuda.py --out $OUT/san --perf none --skip-correctness \
    --sanitize-only SWAP_AB --tag _s14_swap ) > $OUT/san.log 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|rel_err|##" $OUT/san.log | head -24
tail -3 $OUT/san.log
