# session 16, device call 1: the deterministic fix-up spread over the K parts (printer/spread.py).
# a: one 128x128 tile, K 65536: the reduce kernel (today's pick) against the spread sum at 32/48/64
#    parts and the atomic fix-up; b: the two few-tile deep-K shapes, today's 128x256 c2x1 split-K 16
#    pick against the same and two other tiles with the spread sum; c/d: every shape whose pick is
#    deterministic split-K, with the spread sum off (TILEC_CUDA_SPREAD=0) and on.
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
DET=DECOMP=splitk,FIXUP=deterministic
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,$DET,SPLITS=48 \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,$DET,SPLITS=32 \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,$DET,SPLITS=64 \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,DECOMP=splitk,FIXUP=atomic,SPLITS=48
probe b --only '^(skinny_512_k64k|deep_256x1024_k128k)$' \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,$DET,SPLITS=16,CM=2,CN=1 \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,$DET,SPLITS=16 \
  --candidates BM=128,BN=128,WARPS=12,STAGES=6,$DET,SPLITS=8,CM=2,CN=1
DETS='^(seed001_awq|decode_m16|skinny_1024_k32k|l3_8b_qkv_m1|l3_8b_o_m2|l3_8b_down_m8|l3_70b_qkv_m16|qwen2_7b_down_m64|dsv3_gateup_m24|mixtral_w2_m256|mixtral_w2_m512|deep_64x4096_k32k|deep_4096x512_k16k|deep_1000x1000_k50000)$'
TILEC_CUDA_SPREAD=0 probe c --only "$DETS"
probe d --only "$DETS"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
