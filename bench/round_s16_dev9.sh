# session 16, device call 9: 128 x 128 x 65536 (0.894-0.904x): every part spreads, so none runs the
# epilogue and its TMA-store staging can give way to a 7th stage (EPILOGUE=direct); twice, beside the pick
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
C=BM=128,BN=128,WARPS=12,EPILOGUE=direct,DECOMP=splitk,FIXUP=deterministic
probe() { tag=$1; shift; mkdir -p $OUT/$tag
  ( time timeout 120 python bench/dispatch_cuda.py all --out $OUT/$tag "$@" ) > $OUT/$tag.log 2>&1
  grep -A22 "^shape " $OUT/$tag.log | cut -c1-190; }
probe a --only '^deep_128_k64k$' --candidates $C,STAGES=7,SPLITS=48 --candidates $C,STAGES=6,SPLITS=48 \
  --candidates $C,STAGES=7,SPLITS=64
probe b --only '^deep_128_k64k$' --candidates $C,STAGES=7,SPLITS=48 --candidates $C,STAGES=7,SPLITS=64
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
