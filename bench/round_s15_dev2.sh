# session 15, device call 2 (probes after call 1, bench/results/cuda_probe_s15_h200_2026-11-28.json):
# (a) 128 x 128 x 65536: split-K 48-96 at 6 stages (64 at 6 stages won call 1: 0.82 vs 0.70);
# (b) 512^2 x 65536, 256 x 1024 x 131072: 128x256 split-K 16 with 2x1 (call 1: 0.85 / 0.94), 2x2 clusters, split-K 8 / 24;
# (c) the swapped 168x128 tile beyond 1024 rows (call 1: won where M is cut into 168s with under 1% waste and the
#     last wave at least 93% full): the dispatch shapes such a rule would move (wave_1664, wave_2304, wave_3328) and
#     four new shapes of that class, 5 stages beside 4;
# (d) the swapped ring at a 204 KB budget: 333 rows 168x64 at 7 stages again, 1024^3 128x64 at 8 (heuristic: 7).
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
SK=DECOMP=splitk,FIXUP=reduce_kernel
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 170 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  tail -40 $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' \
  --candidates BM=128,BN=128,$SK,SPLITS=48,STAGES=6 --candidates BM=128,BN=128,$SK,SPLITS=64,STAGES=6 \
  --candidates BM=128,BN=128,$SK,SPLITS=80,STAGES=6 --candidates BM=128,BN=128,$SK,SPLITS=96,STAGES=6
probe b --only '^(skinny_512_k64k|deep_256x1024_k128k|skinny_1024_k32k)$' \
  --candidates BM=128,BN=256,$SK,SPLITS=16,STAGES=4,CM=2,CN=1 --candidates BM=128,BN=256,$SK,SPLITS=16,STAGES=4,CM=2,CN=2 \
  --candidates BM=128,BN=128,$SK,SPLITS=8,STAGES=6,CM=2,CN=2 --candidates BM=128,BN=256,$SK,SPLITS=8,STAGES=4,CM=2,CN=1 \
  --candidates BM=128,BN=256,$SK,SPLITS=24,STAGES=4,CM=2,CN=1
probe c --only '^(wave_1664|wave_2304|wave_3328|qwen2_7b_down_m1500|h[0-9]+)$' \
  --shape h2520=2520x4352x4096 --shape h1830=1830x9216x4096 --shape h3350=3350x4096x8192 --shape h2680=2680x6144x2048 \
  --candidates SWAP_AB=1,BM=168,BN=128,WARPS=12,STAGES=4,DECOMP=dp --candidates SWAP_AB=1,BM=168,BN=128,WARPS=12,STAGES=5,DECOMP=dp
probe d --only '^(ragged_333|sq1024)$' \
  --candidates SWAP_AB=1,BM=168,BN=64,WARPS=8,STAGES=7,DECOMP=dp --candidates SWAP_AB=1,BM=128,BN=64,WARPS=8,STAGES=8,DECOMP=dp
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
