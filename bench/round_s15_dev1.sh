# session 15, device call 1 (probes for issue 30's CUDA shapes under 0.9x, bench/dispatch_cuda.py --candidates):
# (a) one deep tile (128 x 128 x 65536): more splits / stages / a 128x64 tile with a 1x2 cluster;
# (b) 16 tiles, deep K (512^2 x 65536, 256 x 1024 x 131072): split-K 16, 128x256 split-K 16, 1x2 cluster;
# (c) 1000^3: 64x128 tiles (cuBLAS's 64x128 2x1), clusters, 128x64;
# (d) 333 x 4096 x 4096: the swapped 168x64 at 7 stages (cuBLAS's), 112x128, 168x128;
# (e) mid-size M (more than 1024 rows): the swapped 168-row tile in two or more waves on 1500 x 3584 x 18944,
#     3000 x 4608 x 3584 and four shapes of our own, against 128x256.
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
SK=DECOMP=splitk,FIXUP=reduce_kernel
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 150 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  tail -32 $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates BM=128,BN=128,$SK,SPLITS=64,STAGES=6 --candidates BM=128,BN=128,$SK,SPLITS=128,STAGES=4 \
  --candidates BM=128,BN=128,$SK,SPLITS=32,STAGES=6 --candidates BM=128,BN=64,$SK,SPLITS=64,STAGES=8 \
  --candidates BM=128,BN=64,$SK,SPLITS=64,STAGES=8,CM=1,CN=2 --candidates BM=64,BN=128,WARPS=8,$SK,SPLITS=64,STAGES=8
probe b --only '^(skinny_512_k64k|deep_256x1024_k128k)$' \
  --candidates BM=128,BN=128,$SK,SPLITS=16,STAGES=6,CM=2,CN=1 --candidates BM=128,BN=128,$SK,SPLITS=8,STAGES=6,CM=1,CN=1 \
  --candidates BM=128,BN=256,$SK,SPLITS=16,STAGES=4,CM=2,CN=1 --candidates BM=128,BN=128,$SK,SPLITS=8,STAGES=6,CM=1,CN=2 \
  --candidates BM=128,BN=128,$SK,SPLITS=12,STAGES=6,CM=2,CN=1
probe c --only '^ragged_1000$' \
  --candidates BM=64,BN=128,WARPS=8,DECOMP=dp,STAGES=8 --candidates BM=64,BN=128,WARPS=8,DECOMP=dp,STAGES=8,CM=2,CN=1 \
  --candidates BM=128,BN=128,DECOMP=dp,CM=2,CN=1 --candidates BM=128,BN=64,DECOMP=dp,STAGES=8 \
  --candidates BM=128,BN=64,DECOMP=dp,STAGES=8,CM=2,CN=1 --candidates BM=64,BN=128,WARPS=8,DECOMP=dp,STAGES=8,CM=1,CN=2
probe d --only '^ragged_333$' \
  --candidates SWAP_AB=1,BM=168,BN=64,WARPS=8,STAGES=7,DECOMP=dp --candidates SWAP_AB=1,BM=112,BN=128,WARPS=12,STAGES=5,DECOMP=dp \
  --candidates SWAP_AB=1,BM=168,BN=128,WARPS=12,STAGES=4,DECOMP=dp --candidates SWAP_AB=1,BM=168,BN=64,WARPS=8,STAGES=6,DECOMP=dp
probe e --only '^(qwen2_7b_down_m1500|qwen2_7b_qkv_m3000|g[0-9]+)$' \
  --shape g1340=1340x4096x4096 --shape g2000=2000x5120x8192 --shape g2500=2500x3584x18944 --shape g1170=1170x14336x4096 \
  --candidates SWAP_AB=1,BM=168,BN=128,WARPS=12,STAGES=4,DECOMP=dp --candidates SWAP_AB=1,BM=168,BN=64,WARPS=8,STAGES=6,DECOMP=dp \
  --candidates BM=128,BN=256,DECOMP=dp,STAGES=4
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
