# session 14, device call 6 (information for the next round, no rule rides on it): (1) cuBLAS's 128x168 (our N x our
# M) at 1500 x 3584 x 18944 as the swapped kernel, 168 rows x 128 columns (two waves), with and without a 1x2 cluster;
# (2) SIMT gpt2 with the staged C epilogue, RASTER=m beside n (gen: simt_gen14x,
#   python bench/bench_simt.py gen --dir simt_gen14x --kernels warp --sizes --shapes 2048x50257x768 \
#     --variant rm:RASTER=m --ragged 4 --ragged-kernels rm)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/p
( time timeout 90 python bench/dispatch_cuda.py all --out $OUT/p --only '^(qwen2_7b_down_m1500)$' \
    --candidates SWAP_AB=1,BM=168,BN=128,DECOMP=dp,STAGES=4 \
    --candidates SWAP_AB=1,BM=168,BN=128,DECOMP=dp,STAGES=4,CM=1,CN=2 \
    --candidates SWAP_AB=1,BM=168,BN=64,DECOMP=dp,STAGES=6 ) > $OUT/p.log 2>&1
tail -6 $OUT/p.log | cut -c1-200
( time timeout 100 python bench/bench_simt.py run --dir simt_gen14x --out $OUT/simt_x.json --rounds 5 --pad auto ) > $OUT/simt_x.log 2>&1
grep -E "built|checked|WRONG" $OUT/simt_x.log; tail -4 $OUT/simt_x.log
