# session 15, device call 6: issue 30's SIMT rows again (17 non-square shapes, CONFIG=auto with the raster rule and
# the staged C epilogue, unchanged since session 14's call 7): a second run of the same kernels, to see whether the
# target (>= 1.0x geomean, none under 0.95x) holds beyond one run. gen (CPU, 5 s):
#   python bench/bench_simt.py gen --dir simt_gen15 --kernels warp --sizes --dispatch --ragged 12 --ragged-kernels warp
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
( time timeout 300 python bench/bench_simt.py run --dir simt_gen15 --out $OUT/simt_dispatch.json --rounds 5 --pad auto \
    --rows-out $OUT/dispatch_simt_h200.json ) > $OUT/simt_d.log 2>&1
grep -E "built|checked|WRONG" $OUT/simt_d.log; tail -22 $OUT/simt_d.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
