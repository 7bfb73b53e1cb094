#!/usr/bin/env bash
# The log kernel reading delta blocks through the host's sums table (issue
# 20; spec/DECODER.md §6d, logs::DeviceBlock::sums), in device calls of at
# most 10 minutes. Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu_logs \
#     --test gpu_hostile --bench gpu_logs --data <a folder `corpus` of the
#     Loghub columns' .xz>
# then on the device, carrying .gpu:
#   PHASE=tests bash bench/gpu-logs-sums.sh     gpu_logs and gpu_hostile, GPU required
#   PHASE=memcheck bash bench/gpu-logs-sums.sh  compute-sanitizer memcheck of the
#                                               log kernel's mixed, mutated,
#                                               corrupted and edge tests
#   PHASE=bench bash bench/gpu-logs-sums.sh     log decode, files with delta blocks
#                                               and without (FASTPAIR_LOGS_NO_DELTA),
#                                               same binary; VARIANTS="a.cu b.cu"
#                                               also times those kernels in place
#                                               of kernels/logs.cu (test builds'
#                                               FASTPAIR_LOGS_CU)
# Logs land in $OUT; summary.txt collects the lines that matter.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$S" 2>&1
status=0
PHASE=${PHASE:-tests}
if [ "$PHASE" = tests ]; then
  step "tests"
  for t in ${TESTS:-gpu_logs-test gpu_hostile-test}; do
    timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t.log" 2>&1 || status=1
    grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$S"
  done
fi
if [ "$PHASE" = memcheck ]; then
  step "memcheck"
  timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test \
    --test-threads 1 mixed mutated corrupted edge > "$OUT/memcheck-logs.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-logs.log" | sed 's/^/memcheck gpu_logs: /' | tee -a "$S"
fi
if [ "$PHASE" = bench ]; then
  for kernel in kept ${VARIANTS:-}; do
    unset FASTPAIR_LOGS_CU
    [ "$kernel" = kept ] || export FASTPAIR_LOGS_CU="$kernel"
    k=$(basename "$kernel" .cu)
    step "log decode, kernel $k: delta blocks on / off"
    for side in ${SIDES:-on off}; do
      unset FASTPAIR_LOGS_NO_DELTA
      [ "$side" = off ] && export FASTPAIR_LOGS_NO_DELTA=1
      CODED=0 REPS=${REPS:-10} timeout 200 .gpu/bin/gpu_logs-bench > "$OUT/logs-$k-$side.md" 2> "$OUT/logs-$k-$side.log" || status=1
      echo "gpu_logs-bench kernel $k delta $side: $(grep geomean "$OUT/logs-$k-$side.md")" | tee -a "$S"
    done
  done
fi
exit $status
