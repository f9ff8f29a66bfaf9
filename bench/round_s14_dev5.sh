# session 14, device call 5: (1) the CUDA path's 50 shapes with the corrected swapped-operand rule (rows of a
# swapped tile 96-168 where M is cut); (2) SIMT, gpt2's 2048 x 50257 x 768 with the C epilogue staged through
# shared memory (helper hsepi: fusion.stage_c, the ragged_n/general variants' stores coalesced) against STAGE_C=off,
# the aligned 2048 x 50304 x 768 and 4096 x 4095 x 4096 beside, 5 rounds (gen: simt_gen14q,
#   python bench/bench_simt.py gen --dir simt_gen14q --kernels warp --sizes \
#     --shapes 2048x50257x768 2048x50304x768 4096x4095x4096 --variant off:STAGE_C=off --ragged 6 --ragged-kernels warp);
# (3) only if the staged kernel is correct: issue 30's SIMT rows over the 17 shapes (gen: simt_gen14d,
#   python bench/bench_simt.py gen --dir simt_gen14d --kernels warp --sizes --dispatch --ragged 12 --ragged-kernels warp)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
mkdir -p $OUT/all
( time timeout 240 python bench/dispatch_cuda.py all --out $OUT/all ) > $OUT/all.log 2>&1
tail -55 $OUT/all.log | cut -c1-150
( time timeout 150 python bench/bench_simt.py run --dir simt_gen14q --out $OUT/simt_q.json --rounds 5 --pad auto ) > $OUT/simt_q.log 2>&1
grep -E "built|checked|WRONG" $OUT/simt_q.log; tail -6 $OUT/simt_q.log
if grep -q "all correct" $OUT/simt_q.log; then
  ( time timeout 330 python bench/bench_simt.py run --dir simt_gen14d --out $OUT/simt_dispatch.json --rounds 5 --pad auto \
      --rows-out $OUT/dispatch_simt_h200.json ) > $OUT/simt_d.log 2>&1
  grep -E "built|checked|WRONG" $OUT/simt_d.log; tail -22 $OUT/simt_d.log
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
