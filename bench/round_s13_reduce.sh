# session 13 (branch hred13): the CUDA reduce-kernel fix-up (split-K parts to private workspace slots, a second
# kernel over every SM sums them in K order and writes C). Two device calls, each under 10 minutes; carry devdeps:
#   bash bench/round_s13_reduce.sh check   # correctness + compute-sanitizer + the PDL on/off difference
#   bash bench/round_s13_reduce.sh speed   # x cuBLAS on the deep-K / few-tile shapes, NaN-poisoned C per kernel
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
case "$1" in
check)
  mkdir -p $OUT/rk_check $OUT/rk_pdl_off
  # bench_cuda's five reduce-kernel cases (ragged M/N, 2x1 / 1x2 clusters, 256-row tiles, B K x N, 32 parts of one
  # tile, a C written through a padded copy): NaN-poisoned C, rel err < 1e-2, bitwise repeat, and bitwise equal to
  # the same plan with the deterministic fix-up; then compute-sanitizer memcheck / racecheck / synccheck on two cases
  ( time timeout 330 python bench/bench_cuda.py --out $OUT/rk_check --only reduce_kernel \
      --sanitize-only reduce_kernel --perf none --tag _s13_reduce ) > $OUT/rk_check.log 2>&1
  tail -40 $OUT/rk_check.log
  grep -h '"ok"\|equals_deterministic\|bitwise_repeat' $OUT/rk_check/cuda_correctness_*_s13_reduce.json | sort | uniq -c
  # the programmatic dependent launch off (TILEC_CUDA_PDL=0: a plain second launch), to weigh against the speed call
  ( time TILEC_CUDA_PDL=0 timeout 200 python bench/dispatch_cuda.py all --out $OUT/rk_pdl_off \
      --only 'deep_128_k64k|skinny_512|deep_1000x1000' \
      --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=32 --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=8 \
    ) > $OUT/rk_pdl_off.log 2>&1
  tail -20 $OUT/rk_pdl_off.log
  ;;
speed)
  mkdir -p $OUT/rk_speed
  # every deep-K / skinny shape and ragged_333 (333x4096x4096): the heuristic (deterministic fix-up) against the
  # reduce kernel at the cost model's split count, 8, 32 and 64 parts, and on a 2x1 cluster; each kernel's C checked
  # NaN-poisoned first (ragged 1000x1000x50000 and 333x4096x4096 among them)
  ( time timeout 560 python bench/dispatch_cuda.py all --out $OUT/rk_speed --only 'deep_|skinny_|ragged_333' \
      --candidates DECOMP=splitk,FIXUP=reduce_kernel --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=8 \
      --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=32 --candidates DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=64 \
      --candidates seed:CM=2,CN=1,DECOMP=splitk,FIXUP=reduce_kernel,SPLITS=8 ) > $OUT/rk_speed.log 2>&1
  tail -70 $OUT/rk_speed.log
  ;;
*)
  echo "usage: bash bench/round_s13_reduce.sh check|speed" >&2
  exit 2
  ;;
esac
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
