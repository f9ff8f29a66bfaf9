# session 14, SIMT gpt2 kernel-side: the epilogue staged through shared memory (fusion.stage_c; the
# warp kernel: unset, the ragged_n and general variants stage, a warp's C stores 128 contiguous bytes)
# against today's epilogue (off: STAGE_C=off, the 32-bit stores lanes 4 columns apart), both CONFIG=auto,
# --pad auto. (1) correctness: bench_simt.py run checks every job (the 12 ragged shapes of each kernel
# too) against float64 with NaN-poisoned output, twice, and with the padding forced to the tiles and to
# ragged_n; (2) 5 rounds at gpt2's 2048 x 50257 x 768, 4096 x 4095 x 4096, 3001 x 5001 x 2001 and the
# aligned 2048 x 50304 x 768 (whose tiles variant is not staged: the two kernels should tie there).
# gen (on the CPU, repo root, before the device call; the directory travels with the working tree):
#   python bench/bench_simt.py gen --dir simt_gen14s --kernels warp --sizes \
#     --shapes 2048x50257x768 4096x4095x4096 3001x5001x2001 2048x50304x768 \
#     --variant off:STAGE_C=off --ragged 12 --ragged-kernels warp off
# (3) --pad auto pads 3001 x 5001 x 2001 to the tiles (M off the tile: no ragged_n), whose 128-bit
# stores are not staged; the second run times the staged general variant itself (--pad never) there and at
# 4096 x 4095 x 4096 (gen: simt_gen14sn,
#   python bench/bench_simt.py gen --dir simt_gen14sn --kernels warp --sizes \
#     --shapes 3001x5001x2001 4096x4095x4096 --variant off:STAGE_C=off --ragged 0 --ragged-kernels)
set -x
export PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv
( time timeout 360 python bench/bench_simt.py run --dir simt_gen14s --out $OUT/simt_sepi.json --rounds 5 --pad auto ) > $OUT/simt_sepi.log 2>&1
grep -E "built|checked|WRONG" $OUT/simt_sepi.log
tail -24 $OUT/simt_sepi.log
( time timeout 200 python bench/bench_simt.py run --dir simt_gen14sn --out $OUT/simt_sepi_never.json --rounds 5 --pad never ) > $OUT/simt_sepi_never.log 2>&1
grep -E "built|checked|WRONG" $OUT/simt_sepi_never.log
tail -12 $OUT/simt_sepi_never.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
