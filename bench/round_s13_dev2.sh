# session 13, device call 2: is the 2x1 cluster or the seed schedule what lifts 1000^2x50000? which tile for
# CUDA rows in (64, 128]?
set -x
export PYTHONPATH=$PWD:$PWD/devdeps
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/clu $OUT/rows
( time timeout 120 python bench/dispatch_cuda.py all --out $OUT/clu --only 'deep_1000|qwen2_7b_down_m1500|deep_256x1024|skinny_512' --candidates seed:CM=1,CN=1,CLUSTER=1 --candidates seed:CM=2,CN=1 ) > $OUT/clu.log 2>&1
tail -16 $OUT/clu.log
( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/rows --only '^p|ragged_77|mixtral_w1_m128' --shape p72=72x14336x4096 --shape p96=96x14336x4096 --shape p100=100x4096x4096 --shape p112=112x4096x7168 --shape p120=120x8192x4096 --shape p128=128x8192x4096 --candidates BM=64,BN=256,WARPS=8,STAGES=4 --candidates BM=64,BN=128,WARPS=8,STAGES=8 ) > $OUT/rows.log 2>&1
tail -30 $OUT/rows.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
