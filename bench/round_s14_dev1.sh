# session 14, device call 1: (1) the CUDA path over the 50 shapes with the CUDA_FEW_DEEP rule (cuBLAS's
# deep-K nvjet 128x128 s6 2x1 split-K), never measured in a full run; (2) SIMT: the warp-tiled kernel
# with its tile rows walked fastest (RASTER=m) beside the default at gpt2's vocabulary projection
# (2048 x 50257 x 768: B is 154 MB, 3x L2) and two other B-heavy shapes (gen: simt_gen14, made with
#   python bench/bench_simt.py gen --dir simt_gen14 --kernels warp --sizes \
#     --shapes 2048x50257x768 1024x32000x4096 2048x14336x4096 --variant rm:RASTER=m --ragged 6 --ragged-kernels rm)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all
( time timeout 300 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -62 $OUT/all.log
( time timeout 200 python bench/bench_simt.py run --dir simt_gen14 --out $OUT/simt14.json --rounds 5 --pad auto ) > $OUT/simt14.log 2>&1
tail -30 $OUT/simt14.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
