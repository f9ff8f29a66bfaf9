# session 13, device call 10: the CUDA heuristic with the very-few-deep-tiles rule at the two shapes it changes
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
mkdir -p $OUT/fd
( time timeout 100 python bench/dispatch_cuda.py all --out $OUT/fd --only 'skinny_512|deep_256x1024|deep_128' ) > $OUT/fd.log 2>&1
tail -8 $OUT/fd.log
