#!/usr/bin/env bash
# Device-side driver for the issue-11 runs (bench/GPU.md). Run from the folder
# that holds the bundle as .gpu/ (../shared/tools/gpu-bundle --data ../shared/corpus).
#   bash bench/gpu-run11.sh tests|hostile|sanitize|ncu|quick|full ...
# ncu: Nsight Compute on the decode kernel and the full scan of NCU_COLS
# (column:codec pairs), clocks left alone (--clock-control none).
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,temperature.gpu --format=csv >> "$OUT/gpu-info.txt" 2>&1
for mode in "$@"; do
  echo "=== $mode $(date -u +%T)"
  case $mode in
    tests) timeout 300 .gpu/bin/gpu-test --test-threads 1 2>&1 | tee "$OUT/tests.log" | grep -E "^test |test result|panicked" ;;
    hostile) timeout 200 .gpu/bin/gpu_hostile-test --test-threads 1 2>&1 | tee "$OUT/hostile.log" | grep -E "^test |test result|panicked" ;;
    sanitize)
      FASTPAIR_CORPUS_ONLY=${SAN_CORPUS:-loghub_Linux_2k,tpch_sf1_o_clerk,dbtext_firstname} timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu-test --test-threads 1 2>&1 | tee "$OUT/memcheck.log" | grep -E "^test |test result|ERROR SUMMARY"
      [ -x .gpu/bin/gpu_hostile-test ] && timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_hostile-test --test-threads 1 2>&1 | tee "$OUT/memcheck-hostile.log" | grep -E "^test |test result|ERROR SUMMARY" ;;
    ncu)
      for cc in ${NCU_COLS:-loghub_HDFS_2k:onpair16 tpch_sf1_c_address:onpair12 nltk_abc_news_en:onpair12 tpch_sf1_l_comment:onpair12}; do
        col=${cc%%:*}; codec=${cc##*:}
        # Launch 1 of fastpair_decode is the full scan (decode + fused offsets), launch 2 decode alone.
        # No ALT_* variants here: only the default configuration is profiled.
        env -u ALT_EMITS -u ALT_M -u ALT_OV -u ALT_LZ ONLY=$col CODEC=$codec SWEEP=0 REPS=2 MIN_BYTES=${NCU_BYTES:-134217728} timeout 120 ncu --clock-control none \
          -k regex:fastpair_ --launch-count 3 --section SpeedOfLight --section ComputeWorkloadAnalysis \
          --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats --section WarpStateStats \
          --section SchedulerStats --section InstructionStats .gpu/bin/gpu_scan-bench > "$OUT/ncu-$col-$codec.txt" 2>&1
        echo "ncu $col $codec rc=$?"
        grep -E "fastpair_|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|L1/TEX Hit|Executed Ipc A|No Eligible|Theoretical Occ|Block Limit Reg|Block Limit Shared" "$OUT/ncu-$col-$codec.txt" | head -60
      done ;;
    quick) ONLY=${ONLY:-loghub_HDFS_2k,tpch_sf1_c_address,nltk_abc_news_en,tpch_sf1_l_comment,tpch_sf1_o_clerk,dbtext_city} SWEEP=0 REPS=${REPS:-30} timeout ${QUICK_S:-300} .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/quick.log" | grep -E "^table|^alt|device|error|panic" ;;
    random) RANDOM_ROWS=${RANDOM_ROWS:-100000000} RANDOM_ONLY=1 timeout 400 .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/random.log" | grep -E "^random|device|error|panic" ;;
    stream) STREAM_GB=${STREAM_GB:-10} RANDOM_ONLY=1 timeout 400 .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/stream.log" | grep -E "^stream|device|error|panic" ;;
    full) SWEEP=0 REPS=${REPS:-50} timeout 500 .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/bench.log" | grep -E "^table|^alt|device|error|panic" ;;
  esac
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/gpu-info.txt" 2>&1
cat "$OUT/gpu-info.txt"
# Everything in one archive (the tool brings back at most 8 files).
(cd "$OUT" && tar czf /tmp/logs.tgz --exclude=logs.tgz . && mv /tmp/logs.tgz logs.tgz && find . -type f ! -name logs.tgz ! -name 'bench.log' ! -name 'quick.log' ! -name 'tests.log' -delete)
