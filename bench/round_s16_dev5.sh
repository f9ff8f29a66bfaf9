# session 16, device call 5: (a) 512^2 x 65536 (L2-bound, 0.85x): clusters that read each operand tile
# from L2 fewer times: 128x256 on a 4x1 cluster (B once, A twice), 256x128 on 1x4 and 1x2; (b) 1000^3
# (rows of 2000 bytes, 0.81x): the pick with the TMA maps' L2 promotion at 256 B (as printed), 128 B
# and none (edited in this call's copy of the tree only)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
RED=DECOMP=splitk,FIXUP=reduce_kernel
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 200 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^skinny_512_k64k$' \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,$RED,SPLITS=16,CM=4,CN=1 \
  --candidates BM=128,BN=256,WARPS=12,STAGES=4,DECOMP=splitk,FIXUP=deterministic,SPLITS=16,CM=4,CN=1 \
  --candidates BM=256,BN=128,WARPS=12,STAGES=4,$RED,SPLITS=16,CM=1,CN=4 \
  --candidates BM=256,BN=128,WARPS=12,STAGES=4,$RED,SPLITS=16,CM=1,CN=2
probe b --only '^ragged_1000$'
sed -i 's/CU_TENSOR_MAP_L2_PROMOTION_L2_256B/CU_TENSOR_MAP_L2_PROMOTION_L2_128B/' tilec/codegen/cuda/printer/file.py
probe c --only '^ragged_1000$'
sed -i 's/CU_TENSOR_MAP_L2_PROMOTION_L2_128B/CU_TENSOR_MAP_L2_PROMOTION_NONE/' tilec/codegen/cuda/printer/file.py
probe d --only '^ragged_1000$'
sed -i 's/CU_TENSOR_MAP_L2_PROMOTION_NONE/CU_TENSOR_MAP_L2_PROMOTION_L2_256B/' tilec/codegen/cuda/printer/file.py
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
