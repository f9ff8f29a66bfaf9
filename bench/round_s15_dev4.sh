# session 15, device call 4 (probes for the three CUDA shapes still under 0.9x after call 3):
# (a) 128 x 128 x 65536: 7 stages, split-K 40 / 56 at 6, the atomic fix-up;
# (b) 512^2 x 65536: 128x256 with 2x1 at other splits and fix-ups, Stream-K;
# (c) 1000^3 (64 128x128 tiles for 132 SMs): split-K 2 (128 CTAs) deterministic / reduce, Stream-K, 128x64 split-K 2.
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
SK=DECOMP=splitk,FIXUP=reduce_kernel
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 170 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A12 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates BM=128,BN=128,$SK,SPLITS=48,STAGES=7 --candidates BM=128,BN=128,$SK,SPLITS=40,STAGES=6 \
  --candidates BM=128,BN=128,$SK,SPLITS=56,STAGES=6 --candidates BM=128,BN=128,DECOMP=splitk,FIXUP=atomic,SPLITS=48,STAGES=6 \
  --candidates BM=128,BN=128,DECOMP=splitk,FIXUP=deterministic,SPLITS=48,STAGES=6
probe b --only '^skinny_512_k64k$' \
  --candidates BM=128,BN=256,DECOMP=splitk,FIXUP=deterministic,SPLITS=16,STAGES=4,CM=2,CN=1 \
  --candidates BM=128,BN=256,$SK,SPLITS=14,STAGES=4,CM=2,CN=1 --candidates BM=128,BN=256,$SK,SPLITS=20,STAGES=4,CM=2,CN=1 \
  --candidates BM=128,BN=256,DECOMP=streamk,STAGES=4,CM=2,CN=1 --candidates BM=128,BN=256,DECOMP=splitk,FIXUP=atomic,SPLITS=16,STAGES=4,CM=2,CN=1
probe c --only '^ragged_1000$' \
  --candidates BM=128,BN=128,DECOMP=splitk,SPLITS=2,FIXUP=deterministic --candidates BM=128,BN=128,$SK,SPLITS=2 \
  --candidates BM=128,BN=128,DECOMP=streamk --candidates BM=128,BN=64,DECOMP=splitk,SPLITS=2,FIXUP=deterministic,STAGES=8 \
  --candidates BM=128,BN=128,DECOMP=dp,STAGES=6
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
