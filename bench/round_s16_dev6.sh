# session 16, device call 6: the spread sum with its short form (SPREAD_BATCH float4s a thread at once
# where a tile has fewer than 16 parts; reduce_float4 split into reduce_where / reduce_write): (a) every
# shape whose pick is deterministic split-K (2-4 parts) with the spread sum from 2 parts
# (SPREAD_MIN_PARTS edited in this call's copy of the tree only); (b) the same with the committed
# 16 (the ticket fix-up); (c) the deep-K picks and the spread sum at 16 parts
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
DETS='^(seed001_awq|decode_m16|skinny_1024_k32k|l3_8b_qkv_m1|l3_8b_o_m2|l3_8b_down_m8|l3_70b_qkv_m16|qwen2_7b_down_m64|dsv3_gateup_m24|mixtral_w2_m256|mixtral_w2_m512|deep_64x4096_k32k|deep_4096x512_k16k|deep_1000x1000_k50000)$'
sed -i 's/^SPREAD_MIN_PARTS = 16$/SPREAD_MIN_PARTS = 2/' tilec/codegen/cuda/printer/spread.py
grep -n "^SPREAD_MIN_PARTS" tilec/codegen/cuda/printer/spread.py
probe a --only "$DETS"
sed -i 's/^SPREAD_MIN_PARTS = 2$/SPREAD_MIN_PARTS = 16/' tilec/codegen/cuda/printer/spread.py
grep -n "^SPREAD_MIN_PARTS" tilec/codegen/cuda/printer/spread.py
probe b --only "$DETS"
probe c --only '^(deep_128_k64k|skinny_512_k64k|deep_256x1024_k128k)$' \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,DECOMP=splitk,FIXUP=deterministic,SPLITS=16,CM=2,CN=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
