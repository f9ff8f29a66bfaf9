# session 14, device call 2 (SIMT): (1) where gpt2's 2048 x 50257 x 768 loses: the same kernel at the aligned
# 2048 x 50304 x 768, and gpt2 with the launcher's padding forced to the tiles (B and C copied) against auto (the
# ragged_n variant: B copied, C written in place with 32-bit stores); RASTER=m beside n (gen: simt_gen14g,
#   python bench/bench_simt.py gen --dir simt_gen14g --kernels warp --sizes --shapes 2048x50257x768 2048x50304x768 \
#     --variant rm:RASTER=m --ragged 0 --ragged-kernels)
# (2) RASTER=m beside n over the 17 SIMT dispatch shapes, exploration timing (gen: simt_gen14r,
#   python bench/bench_simt.py gen --dir simt_gen14r --kernels warp --sizes --dispatch --variant rm:RASTER=m --ragged 0 --ragged-kernels)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
( time timeout 120 python bench/bench_simt.py run --dir simt_gen14g --out $OUT/gpt2_auto.json --rounds 5 --pad auto ) > $OUT/gpt2_auto.log 2>&1
tail -5 $OUT/gpt2_auto.log
( time timeout 120 python bench/bench_simt.py run --dir simt_gen14g --out $OUT/gpt2_tiles.json --rounds 5 --pad tiles ) > $OUT/gpt2_tiles.log 2>&1
tail -5 $OUT/gpt2_tiles.log
( time timeout 200 python bench/bench_simt.py run --dir simt_gen14r --out $OUT/raster.json --pad auto --explore --explore-div 4 --explore-rounds 3 ) > $OUT/raster.log 2>&1
tail -22 $OUT/raster.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
