# session 14, device call 7: issue 30's SIMT rows over the 17 shapes with examples/simt_warp_tiled.py's raster rule
# (RASTER=auto: tile rows walked fastest where N >= 8 M and A fits in half the L2) and the staged C epilogue
# (gen: simt_gen14f,
#   python bench/bench_simt.py gen --dir simt_gen14f --kernels warp --sizes --dispatch --ragged 12 --ragged-kernels warp)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
( time timeout 230 python bench/bench_simt.py run --dir simt_gen14f --out $OUT/simt_dispatch.json --rounds 5 --pad auto \
    --rows-out $OUT/dispatch_simt_h200.json ) > $OUT/simt_d.log 2>&1
grep -E "built|checked|WRONG" $OUT/simt_d.log; tail -21 $OUT/simt_d.log
