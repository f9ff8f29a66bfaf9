# session 14, device call 4: (1) the CUDA path's 50 shapes with the swapped-operand rule (tilec/transforms/
# cuda_swap.py) in the heuristic and the swapped kernel's shuffled pair stores (helper hswap's last commits, not
# yet run on a GPU: dispatch_cuda checks every shape on NaN-poisoned C); (2) the three shapes the rule moved
# without a probe (seed001_awq, mixtral_w1_m128, dsv3_down_m512) beside their call-1 configs as candidates;
# (3) compute-sanitizer on the five swapped cases (the 77-row TMA case now with N = 304: C's rows 16-byte aligned)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all $OUT/moved $OUT/san
( time timeout 300 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -60 $OUT/all.log
( time timeout 100 python bench/dispatch_cuda.py all --out $OUT/moved --only '^(seed001_awq|mixtral_w1_m128|dsv3_down_m512)$' \
    --candidates SWAP_AB=0,BM=128,BN=64,STAGES=8,WARPS=12,DECOMP=splitk,SPLITS=2,FIXUP=deterministic \
    --candidates SWAP_AB=0,BM=128,BN=64,STAGES=8,WARPS=12,DECOMP=dp \
    --candidates SWAP_AB=0,BM=128,BN=256,STAGES=4,WARPS=12,DECOMP=dp ) > $OUT/moved.log 2>&1
tail -16 $OUT/moved.log
( time timeout 150 python bench/bench_cuda.py --out $OUT/san --perf none --skip-correctness \
    --sanitize-only SWAP_AB --tag _s14_swap ) > $OUT/san.log 2>&1
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|launch rc" $OUT/san.log | sort | uniq -c
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
