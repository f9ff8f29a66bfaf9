# session 15, device call 7: the swapped kernel on the deep-K shapes still under 0.9x (512^2 x 65536: swapped 256x128
# and 128x128 split-K with and without clusters; 256 x 1024 x 131072 beside it; 128 x 128 x 65536: swapped 128x128 and
# 128x64 split-K 48)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
SK=DECOMP=splitk,FIXUP=reduce_kernel
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 170 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A12 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^(skinny_512_k64k|deep_256x1024_k128k)$' \
  --candidates SWAP_AB=1,BM=256,BN=128,WARPS=12,STAGES=4,$SK,SPLITS=16 \
  --candidates SWAP_AB=1,BM=256,BN=128,WARPS=12,STAGES=4,$SK,SPLITS=16,CM=1,CN=2 \
  --candidates SWAP_AB=1,BM=128,BN=128,WARPS=12,STAGES=6,$SK,SPLITS=8,CM=2,CN=1
probe b --only '^deep_128_k64k$' \
  --candidates SWAP_AB=1,BM=128,BN=128,WARPS=12,STAGES=6,$SK,SPLITS=48 \
  --candidates SWAP_AB=1,BM=128,BN=64,WARPS=8,STAGES=8,$SK,SPLITS=48
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
