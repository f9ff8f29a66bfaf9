# session 15, device call 8: issue 30's CUDA rows a second time on the same tree as call 3's rules (the 50 shapes),
# to see whether 1.046x / 3 under 0.9x holds beyond one run
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all
( time timeout 330 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -56 $OUT/all.log | cut -c1-160
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
