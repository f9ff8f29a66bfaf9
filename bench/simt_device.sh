#!/bin/bash
# One device call: build + check + time the kernels generated into $1 (bench_simt.py gen), then
# Nsight Compute counters of the kernels in $2 (the analysis' predictions are in $2/manifest.json;
# NCU_DIR "" skips them).
# Usage (on the GPU machine, repository root): bench/simt_device.sh GEN_DIR NCU_DIR OUT_NAME [run args]
# The shape-generic libraries against cuBLAS (gen on the CPU first):
#   python bench/bench_simt.py gen --dir gen_generic --kernels generic_large generic_large_dp \
#       --generic --ragged 20 --ragged-kernels generic_large generic_large_dp warp_small16 vec naive
#   bench/simt_device.sh gen_generic "" simt_generic_<card>_<date>
set -u
GEN=$1; NCU=$2; NAME=$3; shift 3
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit,persistence_mode --format=csv | tee $OUT/nvidia_smi.txt
nvidia-smi base-clocks >> $OUT/nvidia_smi.txt 2>&1
python3 bench/bench_simt.py run --dir "$GEN" --out "$OUT/$NAME.json" "$@" 2>&1 | tee $OUT/$NAME.log
# the Python launcher (tilec.codegen.cuda.simt.launch) on padded, offset and empty operands
timeout 300 python3 bench/bench_simt.py check-launcher --out "$OUT/${NAME}_launcher.json" > $OUT/${NAME}_launcher.log 2>&1
echo "check-launcher rc=$? ($(grep -c WRONG $OUT/${NAME}_launcher.log) wrong)"
if [ -n "$NCU" ]; then
python3 bench/bench_simt.py run --dir "$NCU" --out "$OUT/ncu_checks.json" >> $OUT/ncu.err 2>&1
NAMES=$(python3 -c "import json,sys; print(' '.join(j['name'] for j in json.load(open('$NCU/manifest.json'))))")
M='l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum'
timeout 120 ncu --clock-control none --target-processes all -k regex:'kernel' --metrics $M --csv \
  python3 bench/bench_simt.py launch --dir "$NCU" $NAMES > $OUT/ncu_counters.csv 2>> $OUT/ncu.err
echo "ncu counters rc=$?"
fi
# stall reasons and shared-memory wavefronts (cp.async's ldgsts included) of the kernels listed
# in $GEN/ncu_perf.txt (cublas_M_N_K for torch.matmul)
if [ -f "$GEN/ncu_perf.txt" ]; then
  timeout 150 ncu --clock-control none --target-processes all -k regex:'kernel|gemm' \
    --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' --page details --csv \
    python3 bench/bench_simt.py launch --dir "$GEN" $(cat "$GEN/ncu_perf.txt") > $OUT/ncu_perf.csv 2>> $OUT/ncu.err
  echo "ncu perf rc=$?"
  timeout 60 ncu --clock-control none --target-processes all -k regex:'kernel|gemm' \
    --metrics 'regex:l1tex__data_pipe_lsu_wavefronts_mem_shared.*\.sum$' --csv \
    python3 bench/bench_simt.py launch --dir "$GEN" $(cat "$GEN/ncu_perf.txt") > $OUT/ncu_smem.csv 2>> $OUT/ncu.err
  echo "ncu smem rc=$?"
fi
# per-PC stall samples and SASS (SourceCounters) of the kernels listed in $GEN/ncu_source.txt,
# dumped to JSON with bench_simt.py sources (classified locally with bench/sass_operands.py)
if [ -f "$GEN/ncu_source.txt" ]; then
  timeout 300 ncu --clock-control none --target-processes all -k regex:'^kernel$|gemm' \
    --section SourceCounters --section WarpStateStats --section SchedulerStats --import-source no \
    -f -o $OUT/sources python3 bench/bench_simt.py launch --dir "$GEN" $(cat "$GEN/ncu_source.txt") >> $OUT/ncu.err 2>&1
  echo "ncu sources rc=$?"
  python3 bench/bench_simt.py sources $OUT/sources.ncu-rep --out $OUT/sources.json >> $OUT/ncu.err 2>&1
  echo "sources json rc=$?"
  ncu -i $OUT/sources.ncu-rep --page details --csv > $OUT/sources_details.csv 2>> $OUT/ncu.err
fi
