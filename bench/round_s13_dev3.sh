# session 13, device call 3: where does a 2x1 / 1x2 cluster pay on the CUDA path (deep K, few tiles, on and off
# the 128 grid)? which tile for decode rows (M <= 64)?
set -x
export PYTHONPATH=$PWD:$PWD/devdeps
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/clu $OUT/dec
( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/clu --only '^c[0-9]|deep_1000|skinny_1024|deep_2048|deep_4096x512' --shape c1000x32k=1000x1000x32768 --shape c1000x2000=1000x2000x50000 --shape c1024x50k=1024x1024x50000 --shape c600x900=600x900x40000 --shape c2000x1000=2000x1000x50000 --shape c1000x16k=1000x1000x16384 --shape c1536x64k=1536x1536x65536 --candidates seed:CM=2,CN=1 --candidates seed:CM=1,CN=2 ) > $OUT/clu.log 2>&1
tail -40 $OUT/clu.log
( time timeout 150 python bench/dispatch_cuda.py all --out $OUT/dec --only 'l3_8b_gateup_m4|l3_8b_qkv_m1|qwen2_7b_qkv_m48|l3_8b_o_m2|decode_m16|decode_m64|l3_70b_down_m32' --candidates BM=64,BN=256,WARPS=8,STAGES=4 --candidates BM=64,BN=128,WARPS=8,STAGES=8 --candidates BM=64,BN=192,WARPS=8,STAGES=6 ) > $OUT/dec.log 2>&1
tail -36 $OUT/dec.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
