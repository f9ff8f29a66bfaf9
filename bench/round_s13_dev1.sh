set -x
export PYTHONPATH=$PWD:$PWD/devdeps
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
mkdir -p $OUT/tri $OUT/deep $OUT/small
( time timeout 260 python bench/dispatch.py --module libbench/lib12.py --parts shapes --out $OUT/tri ) > $OUT/tri.log 2>&1
tail -5 $OUT/tri.log
( time timeout 150 python bench/dispatch_cuda.py all --out $OUT/deep --only 'deep_128|deep_256x1024|skinny_512|deep_1000' --candidates DECOMP=splitk,FIXUP=atomic,SPLITS=32 --candidates DECOMP=splitk,FIXUP=atomic,SPLITS=64 --candidates DECOMP=splitk,FIXUP=atomic,SPLITS=128 --candidates seed:CM=2,CN=1 ) > $OUT/deep.log 2>&1
tail -30 $OUT/deep.log
( time timeout 150 python bench/dispatch_cuda.py all --out $OUT/small --only 'sq1024|ragged_1000|ragged_333|dsv3_gateup_m200|dsv3_down_m320|ragged_77' --candidates BM=64,BN=128,WARPS=8 --candidates BM=64,BN=256,WARPS=8,STAGES=4 --candidates seed:CM=2,CN=1 ) > $OUT/small.log 2>&1
tail -40 $OUT/small.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
